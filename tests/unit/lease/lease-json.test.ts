import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LeaseRecord } from "../../../src/domain/lease.js";
import { iso, leaseClockText, leaseJson, leaseText } from "../../../src/lease/lease-json.js";
import { owner, T0 } from "../helpers.js";

function lease(extra: Partial<LeaseRecord> = {}): LeaseRecord {
  return {
    scope: "host:db-7",
    token: 3,
    owner: owner(),
    ttlMs: 30_000,
    acquiredAt: T0 - 60_000,
    heartbeatAt: T0 - 2_000,
    expiresAt: T0 + 28_000,
    takeover: null,
    ...extra,
  };
}

const at = (t: ReturnType<typeof leaseText>, now: number) =>
  Buffer.concat([
    t.head,
    Buffer.from(leaseClockText(t.lease, now, JSON.stringify(iso(now))), "latin1"),
    t.tail,
  ]).toString("utf8");
const text = (l: LeaseRecord, now: number) => at(leaseText(l), now);

describe("leaseText: a lease's JSON made from parts kept between listings", () => {
  const cases: [string, LeaseRecord, number][] = [
    ["a live lease", lease(), T0],
    ["an expired one", lease(), T0 + 40_000],
    ["a lease without expiry", lease({ expiresAt: Number.MAX_SAFE_INTEGER }), T0],
    [
      "odd text in every free field",
      lease({
        owner: owner({
          note: 'quote " backslash \\ newline \n tab \t nul \u0000 ü 日本 \u2028 😀',
          command: 'sh -c \'echo "}"\' ,"heartbeatAgeMs":1',
          childPid: 4130,
          childPidStart: "999",
          system: "backup",
          pid: null,
          pidStart: null,
          bootId: null,
        }),
      }),
      T0,
    ],
    [
      "a lease taken over, with its record",
      lease({
        takeover: {
          previous: {
            token: 2,
            owner: owner({ runId: "r-0" }),
            heartbeatAt: T0 - 90_000,
            expiresAt: T0 - 60_000,
          },
          basis: "dead",
          summary: 'the owner is gone: "pid 4121"',
          probes: [{ probe: "local-process", verdict: "dead", evidence: "pid 4121 is gone" }],
        },
      }),
      T0,
    ],
    ["a clock before the lease began", lease(), T0 - 120_000],
  ];
  for (const [name, l, now] of cases)
    test(`is leaseJson's text byte for byte: ${name}`, () => {
      assert.equal(text(l, now), JSON.stringify(leaseJson(l, now)));
    });

  test("the same parts serve any clock: only the clock's fields change", () => {
    const parts = leaseText(lease());
    for (const now of [T0, T0 + 1, T0 + 27_999, T0 + 28_000, T0 + 86_400_000 * 3]) {
      assert.equal(at(parts, now), JSON.stringify(leaseJson(lease(), now)));
    }
  });
});
