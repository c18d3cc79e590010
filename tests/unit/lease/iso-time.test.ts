import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { iso } from "../../../src/lease/iso-time.js";

const DAY = 86_400_000;
const MAX = 8.64e15;

/** What iso must equal, thrown error included. */
function reference(ms: number): string {
  try {
    return new Date(ms).toISOString();
  } catch (e) {
    return `throws ${(e as Error).name}`;
  }
}

function actual(ms: number): string {
  try {
    return iso(ms);
  } catch (e) {
    return `throws ${(e as Error).name}`;
  }
}

describe("iso: the same text as Date.prototype.toISOString", () => {
  const edges = [
    0,
    1,
    -1,
    999,
    1000,
    59_999,
    60_000,
    3_599_999,
    3_600_000,
    DAY - 1,
    DAY,
    -DAY,
    -DAY - 1,
    951_782_400_000, // 2000-02-29
    1_764_547_199_999,
    253_402_300_799_999, // the last millisecond of year 9999
    253_402_300_800_000, // +010000-01-01
    -62_167_219_200_000, // year 0
    -62_167_219_200_001, // -000001-12-31
    MAX,
    -MAX,
    MAX - 1,
  ];
  for (const ms of edges)
    test(`${ms}`, () => {
      assert.equal(iso(ms), new Date(ms).toISOString());
    });

  test("what toISOString refuses, iso refuses (also on a day it has formatted)", () => {
    iso(MAX);
    iso(-MAX);
    for (const ms of [MAX + 1, -MAX - 1, Number.NaN, Infinity, -Infinity])
      assert.equal(actual(ms), reference(ms));
  });

  test("fractional milliseconds are truncated as Date truncates them", () => {
    for (const ms of [1.5, -1.5, 1_764_547_199_999.9, 0.25])
      assert.equal(actual(ms), reference(ms));
  });

  test("200,000 times over many days, near now and over the whole Date range", () => {
    // A fixed linear congruential sequence: reproducible, no seed to carry around.
    let x = 12345;
    const next = () => (x = (x * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const now = 1_764_547_200_000;
    for (let i = 0; i < 100_000; i++) {
      const near = now + Math.floor((next() - 0.5) * 400 * DAY);
      const anywhere = Math.floor((next() - 0.5) * 2 * MAX);
      assert.equal(iso(near), new Date(near).toISOString());
      assert.equal(iso(anywhere), new Date(anywhere).toISOString());
    }
  });
});
