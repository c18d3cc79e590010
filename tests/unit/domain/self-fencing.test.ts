import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type ClockReading,
  type ValidityWindow,
  advanceWindow,
  elapsedSince,
  isPastLocalDeadline,
  remainingValidity,
} from "../../../src/domain/self-fencing.js";

const START: ClockReading = { mono: 1000, wall: 1_700_000_000_000 };
/** A reading `mono` ms later on the monotonic clock and `wall` ms later on the wall clock. */
const at = (mono: number, wall: number): ClockReading => ({
  mono: START.mono + mono,
  wall: START.wall + wall,
});
const BUDGET = 900; // e.g. TTL 1s minus a 100 ms margin
const WINDOW: ValidityWindow = { renewedAt: START, budgetMs: BUDGET };
const HOUR = 3_600_000;

describe("elapsedSince", () => {
  const cases: { name: string; now: ClockReading; elapsed: number }[] = [
    { name: "no time passed", now: at(0, 0), elapsed: 0 },
    { name: "both clocks agree", now: at(500, 500), elapsed: 500 },
    { name: "monotonic ahead of wall", now: at(500, 400), elapsed: 500 },
    { name: "wall ahead of monotonic (suspended machine)", now: at(100, 60_000), elapsed: 60_000 },
    { name: "wall stood still", now: at(500, 0), elapsed: 500 },
    { name: "wall stepped back 10 s", now: at(500, -10_000), elapsed: 500 },
    { name: "wall stepped back 1 h, monotonic idle", now: at(0, -HOUR), elapsed: 0 },
  ];
  for (const { name, now, elapsed } of cases) {
    test(`${name}: ${elapsed} ms`, () => {
      assert.equal(elapsedSince(START, now), elapsed);
    });
  }
});

describe("remainingValidity and isPastLocalDeadline", () => {
  const cases: { name: string; now: ClockReading; remaining: number; lost: boolean }[] = [
    { name: "just renewed", now: at(0, 0), remaining: 900, lost: false },
    { name: "a third of the way", now: at(300, 300), remaining: 600, lost: false },
    { name: "1 ms before the deadline", now: at(899, 899), remaining: 1, lost: false },
    { name: "exactly at the deadline counts as lost", now: at(900, 900), remaining: 0, lost: true },
    { name: "monotonic past the deadline", now: at(901, 901), remaining: -1, lost: true },
    {
      name: "monotonic past, wall not (wall stepped back)",
      now: at(950, 10),
      remaining: -50,
      lost: true,
    },
    {
      name: "wall past, monotonic not (machine was suspended)",
      now: at(10, 5000),
      remaining: -4100,
      lost: true,
    },
    {
      name: "wall exactly at the deadline, monotonic not",
      now: at(10, 900),
      remaining: 0,
      lost: true,
    },
    {
      name: "wall 1 ms before the deadline, monotonic not",
      now: at(10, 899),
      remaining: 1,
      lost: false,
    },
    {
      name: "wall stepped back 1 h gives no extra time",
      now: at(300, -HOUR),
      remaining: 600,
      lost: false,
    },
    {
      name: "wall stepped back 1 h, monotonic at the deadline",
      now: at(900, -HOUR),
      remaining: 0,
      lost: true,
    },
    { name: "long after", now: at(HOUR, HOUR), remaining: 900 - HOUR, lost: true },
  ];
  for (const { name, now, remaining, lost } of cases) {
    test(`${name}: remaining ${remaining}, lost=${lost}`, () => {
      assert.equal(remainingValidity(WINDOW, now), remaining);
      assert.equal(isPastLocalDeadline(WINDOW, now), lost);
    });
  }

  test("a wall clock stepped backwards never adds time compared with an untouched one", () => {
    for (const mono of [0, 100, 450, 899, 900, 2000]) {
      const steady = remainingValidity(WINDOW, at(mono, mono));
      for (const step of [-1, -1000, -HOUR, -365 * 24 * HOUR]) {
        assert.equal(remainingValidity(WINDOW, at(mono, mono + step)), steady, `${mono}/${step}`);
      }
    }
  });

  test("a zero or negative budget is lost at once", () => {
    assert.equal(isPastLocalDeadline({ renewedAt: START, budgetMs: 0 }, START), true);
    assert.equal(isPastLocalDeadline({ renewedAt: START, budgetMs: -1 }, START), true);
  });
});

describe("advanceWindow", () => {
  test("a later renewal start moves the window there and keeps the budget", () => {
    const start = at(300, 310);
    assert.deepEqual(advanceWindow(WINDOW, start), { renewedAt: start, budgetMs: BUDGET });
  });

  test("advancing does not mutate the window it was given", () => {
    advanceWindow(WINDOW, at(300, 300));
    assert.deepEqual(WINDOW, { renewedAt: { mono: 1000, wall: 1_700_000_000_000 }, budgetMs: 900 });
  });

  const notForward: { name: string; start: ClockReading }[] = [
    { name: "an earlier start (a late response after a retry)", start: at(-200, -200) },
    { name: "the same monotonic instant", start: at(0, 0) },
    { name: "the same monotonic instant with a later wall clock", start: at(0, HOUR) },
    { name: "an earlier monotonic instant with a later wall clock", start: at(-1, HOUR) },
  ];
  for (const { name, start } of notForward) {
    test(`${name} leaves the window where it is`, () => {
      assert.deepEqual(advanceWindow(WINDOW, start), WINDOW);
    });
  }

  test("out-of-order responses never move the window backwards", () => {
    const starts = [at(300, 300), at(900, 900), at(600, 600), at(100, 100), at(900, 950)];
    let w = WINDOW;
    const seen: number[] = [];
    for (const s of starts) {
      w = advanceWindow(w, s);
      seen.push(w.renewedAt.mono - START.mono);
    }
    assert.deepEqual(seen, [300, 900, 900, 900, 900]);
    assert.deepEqual(w.renewedAt, at(900, 900));
    assert.equal(w.budgetMs, BUDGET);
  });

  test("after advancing, the deadline is measured from the new start", () => {
    const w = advanceWindow(WINDOW, at(800, 800));
    assert.equal(remainingValidity(w, at(1000, 1000)), 700);
    assert.equal(isPastLocalDeadline(w, at(1699, 1699)), false);
    assert.equal(isPastLocalDeadline(w, at(1700, 1700)), true);
  });
});
