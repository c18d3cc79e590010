import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  finishWithin,
  localMs,
  nextOpening,
  openInterval,
  parseWindow,
} from "../../../src/domain/wave-window.js";
import { catchQuiesce } from "../helpers.js";

const at = (iso: string) => Date.parse(`${iso}Z`);
// 2024-01-06 is a Saturday.
const SAT = "2024-01-06";

describe("parseWindow: what is accepted", () => {
  const days = (s: string) =>
    parseWindow(s)
      .days.map((d, i) => (d ? i : -1))
      .filter((i) => i >= 0);
  const cases: [string, number[], number, number, boolean][] = [
    // text, days (0 = Sun), start minute, length minutes, utc
    ["Sat 02:00-06:00", [6], 120, 240, false],
    ["sat 2:00-6:30", [6], 120, 270, false],
    ["Saturday 02:00-06:00", [6], 120, 240, false],
    ["Sat,Sun 22:00-02:00", [0, 6], 1320, 240, false],
    ["Mon-Fri 01:00-05:00 UTC", [1, 2, 3, 4, 5], 60, 240, true],
    ["Fri-Mon 00:00-24:00", [0, 1, 5, 6], 0, 1440, false],
    ["daily 03:00-04:00", [0, 1, 2, 3, 4, 5, 6], 180, 60, false],
    ["* 03:00-04:00 utc", [0, 1, 2, 3, 4, 5, 6], 180, 60, true],
    ["03:00-04:00", [0, 1, 2, 3, 4, 5, 6], 180, 60, false],
  ];
  for (const [text, d, start, len, utc] of cases)
    test(text, () => {
      const w = parseWindow(text);
      assert.deepEqual(days(text), d);
      assert.equal(w.startMin, start);
      assert.equal(w.lengthMin, len);
      assert.equal(w.utc, utc);
    });
});

describe("parseWindow: one sentence for what cannot be parsed", () => {
  const bad: [string, string][] = [
    ["", "it is empty"],
    ["Sat", 'cannot read the times "Sat" (HH:MM-HH:MM)'],
    ["Sat 02:00", 'cannot read the times "02:00" (HH:MM-HH:MM)'],
    ["Sat 25:00-26:00", "25:00 is not a time of day"],
    ["Sat 02:60-03:00", "02:60 is not a time of day"],
    ["Sat 02:00-24:30", "24:30 is not a time of day"],
    ["Sat 02:00-02:00", "it starts and ends at the same time"],
    ["Caturday 02:00-06:00", '"caturday" is not a day (Mon, Tue, ... Sun)'],
    ["Sat- 02:00-06:00", 'cannot read the days "Sat-"'],
    ["Sat Sun 02:00-06:00", "too many parts"],
  ];
  for (const [text, why] of bad)
    test(`"${text}"`, () => {
      const e = catchQuiesce(() => parseWindow(text));
      assert.equal(e.code, "INVALID_INPUT");
      assert.equal(
        e.message,
        `--window: "${text}" is not a window (${why}); write e.g. 'Sat 02:00-06:00', 'Mon-Fri 01:00-05:00 UTC' or 'daily 03:00-04:00'`,
      );
    });
});

describe("openInterval: open or closed at an instant", () => {
  const cases: [string, string, boolean][] = [
    ["Sat 02:00-06:00 UTC", `${SAT}T01:59:59`, false],
    ["Sat 02:00-06:00 UTC", `${SAT}T02:00:00`, true],
    ["Sat 02:00-06:00 UTC", `${SAT}T05:59:59`, true],
    ["Sat 02:00-06:00 UTC", `${SAT}T06:00:00`, false],
    ["Sat 02:00-06:00 UTC", "2024-01-07T03:00:00", false], // Sunday
    // Crossing midnight: Saturday's opening runs into Sunday, Friday's does not exist.
    ["Sat 22:00-02:00 UTC", "2024-01-07T01:00:00", true],
    ["Sat 22:00-02:00 UTC", `${SAT}T01:00:00`, false],
    ["Sat 22:00-02:00 UTC", `${SAT}T23:00:00`, true],
    ["Sat 22:00-02:00 UTC", "2024-01-07T02:00:00", false],
    ["daily 00:00-24:00 UTC", "2024-01-03T12:00:00", true],
  ];
  for (const [w, instant, open] of cases)
    test(`${w} at ${instant}: ${open ? "open" : "closed"}`, () =>
      assert.equal(openInterval(parseWindow(w), at(instant)) !== null, open));
  test("a local window reads local wall time (offset -120: two hours east of UTC)", () => {
    const w = parseWindow("Sat 02:00-06:00");
    // 01:30 UTC is 03:30 at UTC+2: open there, closed in UTC.
    assert.ok(openInterval(w, localMs(at(`${SAT}T01:30:00`), -120)));
    assert.equal(openInterval(w, at(`${SAT}T01:30:00`)), null);
  });
});

describe("nextOpening", () => {
  const cases: [string, string, string][] = [
    ["Sat 02:00-06:00 UTC", "2024-01-03T10:00:00", `${SAT}T02:00:00`],
    ["Sat 02:00-06:00 UTC", `${SAT}T03:00:00`, `${SAT}T02:00:00`], // open now: this one
    ["Sat 02:00-06:00 UTC", `${SAT}T07:00:00`, "2024-01-13T02:00:00"],
    ["Mon-Fri 01:00-05:00 UTC", `${SAT}T07:00:00`, "2024-01-08T01:00:00"],
    ["daily 03:00-04:00 UTC", "2024-01-03T04:00:00", "2024-01-04T03:00:00"],
  ];
  for (const [w, from, want] of cases)
    test(`${w} after ${from}: ${want}`, () =>
      assert.equal(nextOpening(parseWindow(w), at(from))!.start, at(want)));
});

describe("finishWithin: work done only while the window is open", () => {
  const H = 3_600_000;
  test("no window: now + work", () => assert.equal(finishWithin(null, 1000, 500), 1500));
  test("fits in the current opening", () =>
    assert.equal(
      finishWithin(parseWindow("Sat 02:00-06:00 UTC"), at(`${SAT}T02:00:00`), 3 * H),
      at(`${SAT}T05:00:00`),
    ));
  test("spills over into next week's opening", () =>
    assert.equal(
      finishWithin(parseWindow("Sat 02:00-06:00 UTC"), at(`${SAT}T05:00:00`), 2 * H),
      at("2024-01-13T03:00:00"),
    ));
  test("starts at the next opening when closed now", () =>
    assert.equal(
      finishWithin(parseWindow("daily 03:00-04:00 UTC"), at("2024-01-03T10:00:00"), 90 * 60_000),
      at("2024-01-05T03:30:00"),
    ));
});
