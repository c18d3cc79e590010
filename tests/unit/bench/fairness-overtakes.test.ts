import assert from "node:assert/strict";
import { test } from "node:test";
import type { Acquisition } from "../../../bench/lease-cycle/contender.js";
import { overtakes } from "../../../bench/lease-cycle/fairness.js";

// The fairness guard of bench/lease-cycle must be able to fail: a waiter passed over by a
// later arrival shows as more than N-1 holders inside its wait.
const HOLD = 5;
const IDLE = 0.5;

/**
 * The log of a run in which the lease went to `order`'s processes in turn: every process is
 * back in line the moment its release returns (its first wait starts at 0), and each holder
 * takes the lease IDLE ms after the previous release returned. `releaseMs(k)`: how long the
 * k-th release took.
 */
function run(order: readonly number[], releaseMs = (_k: number) => 1): Acquisition[] {
  const back = new Map<number, number>();
  const log: Acquisition[] = [];
  let free = 0;
  order.forEach((pid, k) => {
    const acquiredAt = k === 0 ? 0 : free + IDLE;
    const heldUntil = acquiredAt + HOLD;
    const releasedAt = heldUntil + releaseMs(k);
    log.push({
      pid,
      token: k + 1,
      waitStart: back.get(pid) ?? 0,
      acquiredAt,
      heldUntil,
      releasedAt,
    });
    back.set(pid, releasedAt);
    free = releasedAt;
  });
  return log;
}

test("in arrival order, a wait holds the other N-1 holders and no more", () => {
  assert.equal(overtakes(run([1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3])).maxOvertakes, 2);
});

test("a waiter passed over counts every holder that went ahead of it", () => {
  // Process 3 is back in line after token 3; processes 1 and 2 go twice each before it.
  assert.equal(overtakes(run([1, 2, 3, 1, 2, 1, 2, 3])).maxOvertakes, 4);
});

test("the first waits, which all start at the go signal, are not counted", () => {
  assert.equal(overtakes(run([1, 2, 3, 4, 5, 1])).maxOvertakes, 4);
  assert.equal(overtakes(run([1, 2, 3, 4, 5])).maxOvertakes, 0);
});

test("the longest wait names the slowest release it sat behind", () => {
  const r = overtakes(run([1, 2, 3, 1, 2, 3], (k) => (k === 4 ? 40 : 1)));
  assert.equal(r.slowestReleaseMs, 40);
  assert.equal(r.maxOvertakes, 2);
});
