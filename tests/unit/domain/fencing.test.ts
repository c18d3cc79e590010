import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type FenceFailure,
  describeFenceFailure,
  fenceFailure,
} from "../../../src/domain/fencing.js";
import type { LeaseRecord } from "../../../src/domain/lease.js";
import { T0, lease } from "../helpers.js";

// The current lease: token 8, expires at T0+90s.
const CURRENT = lease({ token: 8, owner: { runId: "r-2", host: "db-8", pid: 99 } });

describe("fenceFailure", () => {
  const cases: {
    name: string;
    current: LeaseRecord | null;
    token: number;
    now: number;
    want: FenceFailure | null;
  }[] = [
    { name: "no lease at all", current: null, token: 8, now: T0, want: "not_held" },
    { name: "an older token", current: CURRENT, token: 7, now: T0 + 1000, want: "token_mismatch" },
    { name: "a newer token", current: CURRENT, token: 9, now: T0 + 1000, want: "token_mismatch" },
    {
      name: "another token on an expired lease: mismatch wins",
      current: CURRENT,
      token: 7,
      now: T0 + 100_000,
      want: "token_mismatch",
    },
    {
      name: "our token, expiresAt == now",
      current: CURRENT,
      token: 8,
      now: T0 + 90_000,
      want: "expired",
    },
    {
      name: "our token, past expiry",
      current: CURRENT,
      token: 8,
      now: T0 + 95_000,
      want: "expired",
    },
    {
      name: "our token, 1 ms before expiry",
      current: CURRENT,
      token: 8,
      now: T0 + 89_999,
      want: null,
    },
    { name: "our token, fresh", current: CURRENT, token: 8, now: T0 + 61_000, want: null },
  ];
  for (const { name, current, token, now, want } of cases) {
    test(`${name}: ${String(want)}`, () => {
      assert.equal(fenceFailure(current, token, now), want);
    });
  }
});

describe("describeFenceFailure", () => {
  const cases: {
    reason: FenceFailure;
    current: LeaseRecord | null;
    now: number;
    text: string;
  }[] = [
    {
      reason: "not_held",
      current: null,
      now: T0,
      text: "the lease on host:db-7 with token 7 is no longer held (it was released)",
    },
    {
      reason: "token_mismatch",
      current: CURRENT,
      now: T0,
      text: "the lease on host:db-7 with token 7 was superseded: token 8 is held by run r-2, on db-8, pid 99",
    },
    {
      reason: "token_mismatch",
      current: lease({ token: 8, owner: { system: "backup", pid: null } }),
      now: T0,
      text: 'the lease on host:db-7 with token 7 was superseded: token 8 is held by run r-1 of system "backup", on db-7',
    },
    {
      reason: "token_mismatch",
      current: null,
      now: T0,
      text: "the lease on host:db-7 with token 7 was superseded",
    },
    {
      reason: "expired",
      current: CURRENT,
      now: T0 + 92_500,
      text: "the lease on host:db-7 with token 7 expired 2.5s ago",
    },
    {
      reason: "expired",
      current: CURRENT,
      now: T0 + 90_000,
      text: "the lease on host:db-7 with token 7 expired 0ms ago",
    },
    {
      reason: "expired",
      current: CURRENT,
      now: T0 + 90_000 + 3_900_000,
      text: "the lease on host:db-7 with token 7 expired 1h05m ago",
    },
    {
      reason: "expired",
      current: null,
      now: T0,
      text: "the lease on host:db-7 with token 7 expired 0ms ago",
    },
  ];
  for (const { reason, current, now, text } of cases) {
    test(`${reason}${current === null ? " (no current lease)" : ""}: ${JSON.stringify(text)}`, () => {
      assert.equal(describeFenceFailure("host:db-7", 7, reason, current, now), text);
    });
  }

  test("the reason fenceFailure gives describes the situation it saw", () => {
    const reason = fenceFailure(CURRENT, 7, T0 + 1000);
    assert.equal(reason, "token_mismatch");
    assert.match(
      describeFenceFailure("host:db-7", 7, reason ?? "not_held", CURRENT, T0 + 1000),
      /superseded: token 8 is held by run r-2/,
    );
  });
});
