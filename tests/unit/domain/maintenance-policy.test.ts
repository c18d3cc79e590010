import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  DEFAULT_POLICY,
  parsePolicy,
  policyToJson,
  type MaintenancePolicy,
} from "../../../src/domain/maintenance-policy.js";
import { catchQuiesce } from "../helpers.js";

describe("parsePolicy: valid input", () => {
  const cases: [string, unknown, Partial<MaintenancePolicy>][] = [
    ["nothing: the defaults", undefined, {}],
    ["an empty mapping", {}, {}],
    ["a drain timeout as text", { drain_timeout: "2m" }, { drainTimeoutMs: 120_000 }],
    ["a drain timeout in ms (API)", { drain_timeout: 1500 }, { drainTimeoutMs: 1500 }],
    ["a zero drain timeout: the deadline is now", { drain_timeout: "0s" }, { drainTimeoutMs: 0 }],
    ["abort_and_review", { on_deadline: "abort_and_review" }, { onDeadline: "abort_and_review" }],
    ["fail", { unknown_side_effects: "fail" }, { unknownSideEffects: "fail" }],
    ["accept_new_work: false, said out loud", { accept_new_work: false }, {}],
  ];
  for (const [name, input, want] of cases)
    test(name, () => assert.deepEqual(parsePolicy(input), { ...DEFAULT_POLICY, ...want }));
});

describe("parsePolicy: one sentence per mistake, naming the source and the key", () => {
  const cases: [string, unknown, string][] = [
    [
      "not a mapping",
      ["x"],
      "p.yaml: expected a mapping of policy keys (drain_timeout, on_deadline, unknown_side_effects, accept_new_work)",
    ],
    [
      "a scalar",
      "90s",
      "p.yaml: expected a mapping of policy keys (drain_timeout, on_deadline, unknown_side_effects, accept_new_work)",
    ],
    [
      "an unknown key",
      { drain_timout: "1s" },
      'p.yaml: unknown key "drain_timout" (known: drain_timeout, on_deadline, unknown_side_effects, accept_new_work)',
    ],
    [
      "a bad duration",
      { drain_timeout: "90x" },
      'p.yaml: drain_timeout: "90x" is not a duration (cannot read "90x"); use e.g. 250ms, 90s, 5m, 1h30m',
    ],
    [
      "a negative number",
      { drain_timeout: -1 },
      "p.yaml: drain_timeout: -1 is not a non-negative number of milliseconds",
    ],
    [
      "a boolean duration",
      { drain_timeout: true },
      'p.yaml: drain_timeout must be a duration such as "90s"',
    ],
    [
      "too long",
      { drain_timeout: "25h" },
      "p.yaml: drain_timeout: 1d1h is longer than the limit of 24h",
    ],
    [
      "an unknown on_deadline",
      { on_deadline: "wait" },
      'p.yaml: on_deadline: "wait" is not one of checkpoint_and_stop, abort_and_review',
    ],
    [
      "an unknown unknown_side_effects",
      { unknown_side_effects: "retry" },
      'p.yaml: unknown_side_effects: "retry" is not one of quarantine, fail',
    ],
    [
      "accept_new_work: true",
      { accept_new_work: true },
      "p.yaml: accept_new_work must be false: a draining runtime never accepts new work",
    ],
  ];
  for (const [name, input, message] of cases)
    test(name, () => {
      const e = catchQuiesce(() => parsePolicy(input, "p.yaml"));
      assert.equal(e.code, "INVALID_INPUT");
      assert.equal(e.message, message);
    });
});

test("policyToJson writes what parsePolicy reads back", () => {
  const p: MaintenancePolicy = {
    drainTimeoutMs: 90_500,
    onDeadline: "abort_and_review",
    unknownSideEffects: "fail",
    acceptNewWork: false,
  };
  assert.deepEqual(parsePolicy(policyToJson(p)), p);
});
