import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  ErrorCode,
  QuiesceError,
  invalidInput,
  isQuiesceError,
} from "../../../src/domain/errors.js";

describe("ErrorCode", () => {
  test("every code's value is its own name, and the set is the documented one", () => {
    for (const [key, value] of Object.entries(ErrorCode)) assert.equal(value, key);
    assert.deepEqual(Object.keys(ErrorCode).sort(), [
      "COMMAND_FAILED",
      "DUPLICATE_EFFECT",
      "INTERNAL",
      "INVALID_INPUT",
      "INVALID_TRANSITION",
      "LEASE_HELD",
      "LEASE_LOST",
      "NEEDS_REVIEW",
      "RUN_SUSPENDED",
      "SCHEMA_TOO_NEW",
      "STORE_INVALID",
      "STORE_MISSING",
      "STORE_UNAVAILABLE",
      "WORK_REFUSED",
    ]);
  });
});

describe("QuiesceError", () => {
  test("code, message and name; an Error; no cause and empty details by default", () => {
    const e = new QuiesceError(ErrorCode.LEASE_HELD, "patch:wave is held by run r-1");
    assert.ok(e instanceof Error);
    assert.ok(e instanceof QuiesceError);
    assert.equal(e.name, "QuiesceError");
    assert.equal(e.code, "LEASE_HELD");
    assert.equal(e.message, "patch:wave is held by run r-1");
    assert.deepEqual(e.details, {});
    assert.equal(Object.hasOwn(e, "cause"), false);
    assert.equal(e.cause, undefined);
    assert.match(String(e), /^QuiesceError: patch:wave is held by run r-1$/);
  });

  test("cause is chained as given", () => {
    const driver = new Error("ECONNREFUSED 127.0.0.1:5432");
    const e = new QuiesceError(ErrorCode.STORE_UNAVAILABLE, "cannot reach the store", {
      cause: driver,
    });
    assert.equal(e.cause, driver);
  });

  test("a falsy cause other than undefined is still chained", () => {
    const e = new QuiesceError(ErrorCode.INTERNAL, "x", { cause: null });
    assert.equal(Object.hasOwn(e, "cause"), true);
    assert.equal(e.cause, null);
    const z = new QuiesceError(ErrorCode.INTERNAL, "x", { cause: 0 });
    assert.equal(z.cause, 0);
  });

  test("an explicit undefined cause leaves no cause property", () => {
    const e = new QuiesceError(ErrorCode.INTERNAL, "x", { cause: undefined });
    assert.equal(Object.hasOwn(e, "cause"), false);
  });

  test("details are kept", () => {
    const details = { scope: "patch:wave", token: 7, holder: { runId: "r-1" } };
    const e = new QuiesceError(ErrorCode.LEASE_LOST, "lost", { details });
    assert.deepEqual(e.details, { scope: "patch:wave", token: 7, holder: { runId: "r-1" } });
  });

  test("each instance gets its own default details object", () => {
    const a = new QuiesceError(ErrorCode.INTERNAL, "a");
    const b = new QuiesceError(ErrorCode.INTERNAL, "b");
    assert.notEqual(a.details, b.details);
  });
});

describe("isQuiesceError", () => {
  class SubError extends QuiesceError {}
  const held = new QuiesceError(ErrorCode.LEASE_HELD, "held");
  const cases: { name: string; value: unknown; code?: ErrorCode; want: boolean }[] = [
    { name: "a QuiesceError, no code asked", value: held, want: true },
    {
      name: "a QuiesceError with the asked code",
      value: held,
      code: ErrorCode.LEASE_HELD,
      want: true,
    },
    {
      name: "a QuiesceError with another code",
      value: held,
      code: ErrorCode.LEASE_LOST,
      want: false,
    },
    {
      name: "a subclass instance",
      value: new SubError(ErrorCode.INTERNAL, "x"),
      want: true,
    },
    { name: "a plain Error", value: new Error("held"), want: false },
    {
      name: "a plain Error with a code property",
      value: Object.assign(new Error("held"), { code: "LEASE_HELD" }),
      code: ErrorCode.LEASE_HELD,
      want: false,
    },
    {
      name: "a look-alike object",
      value: { name: "QuiesceError", code: "LEASE_HELD", message: "held", details: {} },
      want: false,
    },
    { name: "null", value: null, want: false },
    { name: "undefined", value: undefined, want: false },
    { name: "a string", value: "LEASE_HELD", want: false },
  ];
  for (const { name, value, code, want } of cases) {
    test(`${name}${code ? ` (code ${code})` : ""}: ${want}`, () => {
      assert.equal(isQuiesceError(value, code), want);
    });
  }
});

describe("invalidInput", () => {
  test("INVALID_INPUT with the message and no details", () => {
    const e = invalidInput("--ttl: too short");
    assert.ok(e instanceof QuiesceError);
    assert.equal(e.code, ErrorCode.INVALID_INPUT);
    assert.equal(e.message, "--ttl: too short");
    assert.deepEqual(e.details, {});
    assert.equal(Object.hasOwn(e, "cause"), false);
  });

  test("details are passed through", () => {
    const e = invalidInput("--scope: bad", { scope: "a b" });
    assert.deepEqual(e.details, { scope: "a b" });
  });
});
