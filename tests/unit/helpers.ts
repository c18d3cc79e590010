import assert from "node:assert/strict";
import { type ErrorCode, QuiesceError } from "../../src/domain/errors.js";
import type { LeaseOwner, LeaseRecord } from "../../src/domain/lease.js";

/** Runs `fn`, which must throw a QuiesceError, and returns that error for exact assertions. */
export function catchQuiesce(fn: () => unknown): QuiesceError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof QuiesceError, `expected a QuiesceError, got ${String(e)}`);
    return e;
  }
  assert.fail("expected the call to throw a QuiesceError, but it returned");
}

/** `fn` must throw a QuiesceError with exactly this code and message. */
export function assertQuiesceError(fn: () => unknown, code: ErrorCode, message: string): void {
  const e = catchQuiesce(fn);
  assert.equal(e.code, code);
  assert.equal(e.message, message);
}

export function owner(extra: Partial<LeaseOwner> = {}): LeaseOwner {
  return {
    runId: "r-1",
    system: "quiesce",
    host: "db-7",
    pid: 4121,
    pidStart: "987654",
    bootId: "boot-1",
    childPid: null,
    childPidStart: null,
    command: null,
    note: null,
    ...extra,
  };
}

/** 2024-01-02T03:04:05.000Z: a fixed store-clock instant to build leases around. */
export const T0 = Date.UTC(2024, 0, 2, 3, 4, 5);

export function lease(
  extra: Partial<Omit<LeaseRecord, "owner">> & { owner?: Partial<LeaseOwner> } = {},
): LeaseRecord {
  const { owner: ownerExtra, ...rest } = extra;
  return {
    scope: "host:db-7",
    token: 42,
    ttlMs: 30_000,
    acquiredAt: T0,
    heartbeatAt: T0 + 60_000,
    expiresAt: T0 + 90_000,
    ...rest,
    owner: owner(ownerExtra),
  };
}
