import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ErrorCode } from "../../../src/domain/errors.js";
import {
  DEFAULT_TTL_MS,
  MIN_TTL_MS,
  describeBlockingLease,
  describeOwner,
  isExpired,
  leaseStatus,
  leaseTiming,
} from "../../../src/domain/lease.js";
import { T0, assertQuiesceError, catchQuiesce, lease, owner } from "../helpers.js";

describe("isExpired (judged on the store's clock)", () => {
  const cases: [number, boolean][] = [
    [0, false],
    [T0 + 89_999, false],
    [T0 + 90_000, true],
    [T0 + 90_001, true],
    [T0 + 10 * 86_400_000, true],
  ];
  for (const [now, expired] of cases) {
    test(`expiresAt T0+90000, now T0+${now - T0}: expired=${expired}`, () => {
      assert.equal(isExpired({ expiresAt: T0 + 90_000 }, now), expired);
    });
  }
});

describe("leaseStatus", () => {
  // acquired T0, last heartbeat T0+60s, expires T0+90s
  const cases: { now: number; want: ReturnType<typeof leaseStatus> }[] = [
    {
      now: T0 + 65_000,
      want: { expired: false, heartbeatAgeMs: 5000, expiresInMs: 25_000, heldForMs: 65_000 },
    },
    {
      now: T0 + 89_999,
      want: { expired: false, heartbeatAgeMs: 29_999, expiresInMs: 1, heldForMs: 89_999 },
    },
    {
      now: T0 + 90_000,
      want: { expired: true, heartbeatAgeMs: 30_000, expiresInMs: 0, heldForMs: 90_000 },
    },
    {
      now: T0 + 91_500,
      want: { expired: true, heartbeatAgeMs: 31_500, expiresInMs: -1500, heldForMs: 91_500 },
    },
  ];
  for (const { now, want } of cases) {
    test(`at T0+${now - T0}`, () => {
      assert.deepEqual(leaseStatus(lease(), now), want);
    });
  }
});

describe("describeOwner", () => {
  const cases: [Parameters<typeof owner>[0], string][] = [
    [{}, "run r-1, on db-7, pid 4121"],
    [{ childPid: 4130 }, "run r-1, on db-7, pid 4121, command pid 4130"],
    [{ pid: null }, "run r-1, on db-7"],
    [{ pid: null, childPid: 12 }, "run r-1, on db-7, command pid 12"],
    [{ system: "backup", pid: 77 }, 'run r-1 of system "backup", on db-7, pid 77'],
    [{ system: "hypervisor", pid: null, host: "hv-1" }, 'run r-1 of system "hypervisor", on hv-1'],
    [{ runId: "7f3a", host: "web-2", pid: 1 }, "run 7f3a, on web-2, pid 1"],
  ];
  for (const [extra, text] of cases) {
    test(JSON.stringify(text), () => {
      assert.equal(describeOwner(owner(extra)), text);
    });
  }
});

describe("describeBlockingLease", () => {
  const since = "since 2024-01-02T03:04:05.000Z";

  test("a live lease: heartbeat age and time left, nothing about takeover", () => {
    const text = describeBlockingLease(lease(), T0 + 65_000);
    assert.equal(
      text,
      `host:db-7 is held by run r-1, on db-7, pid 4121 (token 42) ${since}; last heartbeat 5s ago, expires in 25s`,
    );
  });

  test("a live lease one millisecond before expiry is still live", () => {
    assert.equal(
      describeBlockingLease(lease(), T0 + 89_999),
      `host:db-7 is held by run r-1, on db-7, pid 4121 (token 42) ${since}; last heartbeat 30s ago, expires in 1ms`,
    );
  });

  test("an expired lease: says it was never released and points at takeover", () => {
    const text = describeBlockingLease(lease(), T0 + 180_000);
    assert.equal(
      text,
      `host:db-7 is held by run r-1, on db-7, pid 4121 (token 42) ${since}; its lease expired 1m30s ago ` +
        `(last heartbeat 2m00s ago) and was never released: it stays until a takeover proves the owner is gone ` +
        `(quiesce lock takeover host:db-7)`,
    );
  });

  test("expiresAt == now is described as expired", () => {
    assert.equal(
      describeBlockingLease(lease(), T0 + 90_000),
      `host:db-7 is held by run r-1, on db-7, pid 4121 (token 42) ${since}; its lease expired 0ms ago ` +
        `(last heartbeat 30s ago) and was never released: it stays until a takeover proves the owner is gone ` +
        `(quiesce lock takeover host:db-7)`,
    );
  });

  test("a foreign owner is named with its system", () => {
    const text = describeBlockingLease(
      lease({ scope: "backup/nightly", token: 3, owner: { system: "backup", pid: null } }),
      T0 + 65_000,
    );
    assert.equal(
      text,
      `backup/nightly is held by run r-1 of system "backup", on db-7 (token 3) ${since}; last heartbeat 5s ago, expires in 25s`,
    );
  });

  const offsets = [0, 30_000, 89_999, 90_000, 90_001, 3_600_000, 30 * 86_400_000];
  for (const offset of offsets) {
    const now = T0 + offset;
    const expired = offset >= 90_000;
    test(`wording at T0+${offset}: ${expired ? "takeover, never deletion" : "no takeover"}`, () => {
      const text = describeBlockingLease(lease(), now);
      assert.equal(text.includes("takeover"), expired);
      assert.equal(text.includes("expired"), expired);
      assert.equal(text.includes("expires in"), !expired);
      assert.doesNotMatch(text, /delet|remov|\brm\b|unlink|drop|purge|--force|stale/i);
    });
  }
});

describe("leaseTiming", () => {
  test("constants: default TTL 30s, minimum 100ms", () => {
    assert.equal(DEFAULT_TTL_MS, 30_000);
    assert.equal(MIN_TTL_MS, 100);
  });

  const tooShort: [number, string][] = [
    [0, "0ms"],
    [1, "1ms"],
    [99, "99ms"],
    [-5000, "-5s"],
  ];
  for (const [ttl, shown] of tooShort) {
    test(`a TTL of ${ttl} ms is refused`, () => {
      assertQuiesceError(
        () => leaseTiming(ttl),
        ErrorCode.INVALID_INPUT,
        `--ttl: ${shown} is too short; a lease needs at least 100ms (and a TTL of 0 would never expire)`,
      );
    });
  }

  // default heartbeat = floor(ttl / 3); default margin = floor(ttl / 10) clamped to [50, 5000]
  const defaults: [number, number, number][] = [
    [100, 33, 50],
    [300, 100, 50],
    [500, 166, 50],
    [509, 169, 50],
    [510, 170, 51],
    [1000, 333, 100],
    [30_000, 10_000, 3000],
    [50_000, 16_666, 5000],
    [50_010, 16_670, 5000],
    [3_600_000, 1_200_000, 5000],
  ];
  for (const [ttl, hb, margin] of defaults) {
    test(`defaults for a TTL of ${ttl} ms: heartbeat ${hb}, margin ${margin}`, () => {
      assert.deepEqual(leaseTiming(ttl), { ttlMs: ttl, heartbeatMs: hb, safetyMarginMs: margin });
    });
  }

  test("the defaults always leave room to renew, for every TTL from 100 ms to 1 day", () => {
    for (let ttl = 100; ttl <= 86_400_000; ttl = Math.ceil(ttl * 1.07)) {
      const t = leaseTiming(ttl);
      assert.ok(t.heartbeatMs >= 1, `ttl ${ttl}`);
      assert.ok(t.safetyMarginMs >= 50 && t.safetyMarginMs <= 5000, `ttl ${ttl}`);
      assert.ok(t.heartbeatMs + t.safetyMarginMs < ttl, `ttl ${ttl}`);
    }
  });

  const explicit: [number, number, number | undefined, number][] = [
    [1000, 500, undefined, 100],
    [1000, 1, undefined, 100],
    [1000, 899, undefined, 100],
    [1000, 450, undefined, 100],
    [1000, 333, 200, 200],
    [1000, 500, 499, 499],
  ];
  for (const [ttl, hb, marginIn, margin] of explicit) {
    test(`ttl ${ttl}, heartbeat ${hb}, margin ${String(marginIn)}: accepted`, () => {
      assert.deepEqual(leaseTiming(ttl, hb, marginIn), {
        ttlMs: ttl,
        heartbeatMs: hb,
        safetyMarginMs: margin,
      });
    });
  }

  for (const hb of [0, -1, -1000]) {
    test(`a heartbeat of ${hb} ms is refused`, () => {
      assertQuiesceError(
        () => leaseTiming(1000, hb),
        ErrorCode.INVALID_INPUT,
        "--heartbeat: must be longer than 0",
      );
    });
  }

  const notShorter: [number, number, string][] = [
    [1000, 1000, "--heartbeat: 1s is not shorter than --ttl 1s"],
    [1000, 5000, "--heartbeat: 5s is not shorter than --ttl 1s"],
    [30_000, 90_000, "--heartbeat: 1m30s is not shorter than --ttl 30s"],
  ];
  for (const [ttl, hb, start] of notShorter) {
    test(`heartbeat ${hb} >= ttl ${ttl} is refused, naming --heartbeat`, () => {
      assertQuiesceError(
        () => leaseTiming(ttl, hb),
        ErrorCode.INVALID_INPUT,
        `${start}; the lease would expire between heartbeats`,
      );
    });
  }

  const noRoom: [number, number, number | undefined, string][] = [
    [
      1000,
      900,
      undefined,
      "--heartbeat: 900ms leaves no time to renew before the lease's local deadline (--ttl 1s minus a safety margin of 100ms); use at most 450ms",
    ],
    [
      30_000,
      27_000,
      undefined,
      "--heartbeat: 27s leaves no time to renew before the lease's local deadline (--ttl 30s minus a safety margin of 3s); use at most 13.5s",
    ],
    [
      1000,
      500,
      500,
      "--heartbeat: 500ms leaves no time to renew before the lease's local deadline (--ttl 1s minus a safety margin of 500ms); use at most 250ms",
    ],
  ];
  for (const [ttl, hb, margin, message] of noRoom) {
    test(`heartbeat ${hb} + margin >= ttl ${ttl} is refused`, () => {
      assertQuiesceError(() => leaseTiming(ttl, hb, margin), ErrorCode.INVALID_INPUT, message);
    });
  }

  test("the heartbeat a refusal suggests is itself accepted", () => {
    for (const [ttl, hb, margin] of noRoom) {
      const e = catchQuiesce(() => leaseTiming(ttl, hb, margin));
      const m = /use at most (\S+)$/.exec(e.message);
      assert.ok(m?.[1] !== undefined, e.message);
      const suggested = Math.floor((ttl - (margin ?? leaseTiming(ttl).safetyMarginMs)) / 2);
      assert.doesNotThrow(() => leaseTiming(ttl, suggested, margin));
    }
  });

  // I4: the local deadline (renew start + TTL - margin) must never be later than the store's
  // expiry. A negative or non-number margin would push it past expiry, or (NaN) disable it.
  for (const margin of [-1, -500, NaN, Infinity, -Infinity]) {
    test(`an explicit safety margin of ${margin} is refused`, () => {
      const e = catchQuiesce(() => leaseTiming(1000, 500, margin));
      assert.equal(e.code, ErrorCode.INVALID_INPUT);
    });
  }

  test("a margin as long as the TTL is refused without suggesting a heartbeat of 0 or less", () => {
    for (const margin of [1000, 2000]) {
      const e = catchQuiesce(() => leaseTiming(1000, 100, margin));
      assert.equal(e.code, ErrorCode.INVALID_INPUT);
      assert.doesNotMatch(e.message, /use at most (-|0ms)/, e.message);
    }
  });
});
