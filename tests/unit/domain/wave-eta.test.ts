import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { estimateEta } from "../../../src/domain/wave-eta.js";
import { parseWindow } from "../../../src/domain/wave-window.js";

const NOW = Date.parse("2024-01-06T01:00:00Z"); // a Saturday
const base = { now: NOW, window: null, offsetMin: 0 };

describe("estimateEta", () => {
  const cases: [string, number, number[], number, number | null][] = [
    // name, remaining, durations, parallel, want inMs
    ["nothing left", 0, [], 4, 0],
    ["nothing finished yet: unknown", 10, [], 4, null],
    ["one at a time", 3, [1000, 3000], 1, 6000],
    ["rounds of 4, rounded up", 10, [2000], 4, 6000],
    ["parallel below 1 counts as 1", 2, [1000], 0, 2000],
  ];
  for (const [name, remaining, durations, parallel, want] of cases)
    test(name, () => {
      const e = estimateEta({ ...base, remaining, hostDurationsMs: durations, parallel });
      assert.equal(e === null ? null : e.inMs, want);
      if (e) assert.equal(e.at, NOW + e.inMs);
    });
  test("only while the window is open: closed now, opens in an hour", () => {
    const e = estimateEta({
      ...base,
      remaining: 2,
      hostDurationsMs: [30 * 60_000],
      parallel: 1,
      window: parseWindow("Sat 02:00-06:00 UTC"),
    });
    assert.equal(e!.at, Date.parse("2024-01-06T03:00:00Z"));
    assert.match(e!.basis, /only while the window is open/);
  });
  test("a local window with an offset (UTC+1: offset -60)", () => {
    const e = estimateEta({
      ...base,
      remaining: 1,
      hostDurationsMs: [60_000],
      parallel: 1,
      window: parseWindow("Sat 02:00-06:00"),
      offsetMin: -60,
    });
    // 02:00 local is 01:00 UTC, which is now: open, so one minute from now.
    assert.equal(e!.inMs, 60_000);
  });
});
