import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  runtimeScope,
  validateEffectKey,
  validateMaintenanceId,
  validateRunId,
  validateRuntimeId,
} from "../../../src/domain/journal-names.js";
import { validateScope } from "../../../src/domain/names.js";
import { catchQuiesce } from "../helpers.js";

describe("validateEffectKey", () => {
  for (const k of ["invoice:8472:send", "git/push@main", "a", "x".repeat(200), "order#12=paid+1"])
    test(`accepts ${k.slice(0, 30)}`, () => assert.equal(validateEffectKey(k), k));
  const bad: [string, RegExp][] = [
    ["", /the key is empty/],
    ["x".repeat(201), /201 characters; the limit is 200/],
    ["has space", /not a valid idempotency key/],
    [":leading", /not a valid idempotency key/],
    ["naïve", /not a valid idempotency key/],
  ];
  for (const [k, want] of bad)
    test(`refuses ${JSON.stringify(k.slice(0, 20))}`, () => {
      const e = catchQuiesce(() => validateEffectKey(k, "--effect"));
      assert.equal(e.code, "INVALID_INPUT");
      assert.match(e.message, /^--effect: /);
      assert.match(e.message, want);
    });
});

describe("ids", () => {
  const cases: [(v: string, w?: string) => string, string, boolean][] = [
    [validateRuntimeId, "agent-1", true],
    [validateRuntimeId, "agent.1:eu_west", true],
    [validateRuntimeId, "agent/1", false],
    [validateRuntimeId, "", false],
    [validateRunId, "run-1f2e", true],
    [validateRunId, "r 1", false],
    [validateMaintenanceId, "mw-2024-06-01", true],
    [validateMaintenanceId, "-mw", false],
    [validateMaintenanceId, "x".repeat(121), false],
  ];
  for (const [fn, v, ok] of cases)
    test(`${fn.name}(${JSON.stringify(v.slice(0, 20))}): ${ok ? "ok" : "refused"}`, () => {
      if (ok) assert.equal(fn(v), v);
      else assert.equal(catchQuiesce(() => fn(v)).code, "INVALID_INPUT");
    });
  test("a runtime's scope is a valid lease scope", () => {
    assert.equal(runtimeScope("agent.1:eu_west"), "runtime:agent.1:eu_west");
    assert.doesNotThrow(() => validateScope(runtimeScope("x".repeat(120))));
  });
});
