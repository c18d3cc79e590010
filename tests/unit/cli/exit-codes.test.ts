import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Exit, exitCodeFor } from "../../../src/cli/exit-codes.js";
import { ErrorCode, QuiesceError } from "../../../src/domain/errors.js";

describe("Exit", () => {
  test("the scripted exit codes", () => {
    assert.deepEqual(
      { ...Exit },
      { OK: 0, FAILURE: 1, USAGE: 2, LEASE_UNAVAILABLE: 75, LEASE_LOST: 76 },
    );
  });
});

describe("exitCodeFor", () => {
  const table: Record<ErrorCode, number> = {
    INVALID_INPUT: 2,
    STORE_INVALID: 2,
    SCHEMA_TOO_NEW: 2,
    LEASE_HELD: 75,
    LEASE_LOST: 76,
    STORE_UNAVAILABLE: 1,
    STORE_MISSING: 1,
    INVALID_TRANSITION: 1,
    COMMAND_FAILED: 1,
    INTERNAL: 1,
    WORK_REFUSED: 75,
    RUN_SUSPENDED: 75,
    NEEDS_REVIEW: 1,
    DUPLICATE_EFFECT: 1,
  };

  test("the table covers every ErrorCode", () => {
    assert.deepEqual(Object.keys(table).sort(), Object.values(ErrorCode).sort());
  });

  for (const [code, exit] of Object.entries(table)) {
    test(`${code} exits ${exit}`, () => {
      assert.equal(exitCodeFor(new QuiesceError(code as ErrorCode, "message")), exit);
    });
  }
});
