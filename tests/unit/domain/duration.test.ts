import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { formatDuration, parseDuration, toMs } from "../../../src/domain/duration.js";
import { ErrorCode } from "../../../src/domain/errors.js";
import { assertQuiesceError } from "../helpers.js";

const HINT = "use e.g. 250ms, 90s, 5m, 1h30m";
const notADuration = (what: string, text: string, why: string) =>
  `${what}: "${text}" is not a duration (${why}); ${HINT}`;

describe("parseDuration: accepted input", () => {
  const cases: [string, number][] = [
    ["250ms", 250],
    ["90s", 90_000],
    ["5m", 300_000],
    ["1h30m", 5_400_000],
    ["1.5s", 1500],
    ["1d", 86_400_000],
    ["0s", 0],
    ["0ms", 0],
    ["2h", 7_200_000],
    ["0.5m", 30_000],
    ["1.25h", 4_500_000],
    ["1s500ms", 1500],
    ["1m1ms", 60_001],
    ["1m1s", 61_000],
    ["1d2h3m4s5ms", 93_784_005],
    ["007s", 7000],
    ["1.5ms", 2],
    ["0.4ms", 0],
    ["9007199254740991ms", Number.MAX_SAFE_INTEGER],
  ];
  for (const [text, ms] of cases) {
    test(`${JSON.stringify(text)} is ${ms} ms`, () => {
      assert.equal(parseDuration(text, "--ttl"), ms);
    });
  }

  const padded: [string, number][] = [
    [" 5s ", 5000],
    ["\t90s\n", 90_000],
    ["  1h30m", 5_400_000],
  ];
  for (const [text, ms] of padded) {
    test(`surrounding whitespace is trimmed: ${JSON.stringify(text)} is ${ms} ms`, () => {
      assert.equal(parseDuration(text, "--ttl"), ms);
    });
  }
});

describe("parseDuration: refused input names the flag and the reason", () => {
  const cases: { text: string; what: string; why: string }[] = [
    { text: "", what: "--ttl", why: "it is empty" },
    { text: "   ", what: "--ttl", why: "it is empty" },
    { text: "90", what: "--ttl", why: "it has no unit" },
    { text: "1.5", what: "--heartbeat", why: "it has no unit" },
    { text: " 90 ", what: "--ttl", why: "it has no unit" },
    { text: "-5s", what: "--wait", why: "it is negative" },
    { text: " -5s", what: "--wait", why: "it is negative" },
    { text: "-0s", what: "--ttl", why: "it is negative" },
    { text: "90x", what: "--ttl", why: 'cannot read "90x"' },
    { text: "abc", what: "--ttl", why: 'cannot read "abc"' },
    { text: "5sec", what: "--ttl", why: 'cannot read "ec"' },
    { text: "5M", what: "--ttl", why: 'cannot read "5M"' },
    { text: "5S", what: "--ttl", why: 'cannot read "5S"' },
    { text: "5 s", what: "--ttl", why: 'cannot read "5 s"' },
    { text: "1h 30m", what: "--ttl", why: 'cannot read " 30m"' },
    { text: "+5s", what: "--ttl", why: 'cannot read "+5s"' },
    { text: ".5s", what: "--ttl", why: 'cannot read ".5s"' },
    { text: "1.s", what: "--ttl", why: 'cannot read "1.s"' },
    { text: "1e3s", what: "--ttl", why: 'cannot read "1e3s"' },
    { text: "1,5s", what: "--ttl", why: 'cannot read "1,5s"' },
    { text: "30m1h", what: "--ttl", why: "units must go from largest to smallest, each once" },
    { text: "1h1h", what: "--ttl", why: "units must go from largest to smallest, each once" },
    { text: "1s1s", what: "--ttl", why: "units must go from largest to smallest, each once" },
    { text: "500ms1s", what: "--ttl", why: "units must go from largest to smallest, each once" },
    { text: "1s1m", what: "--ttl", why: "units must go from largest to smallest, each once" },
    { text: "99999999999999999999d", what: "--ttl", why: "it is too large" },
    { text: "9007199254740992ms", what: "--ttl", why: "it is too large" },
    { text: `1${"0".repeat(400)}s`, what: "--ttl", why: "it is too large" },
  ];
  for (const { text, what, why } of cases) {
    test(`${JSON.stringify(text.length > 30 ? text.slice(0, 30) + "..." : text)}: ${why}`, () => {
      assertQuiesceError(
        () => parseDuration(text, what),
        ErrorCode.INVALID_INPUT,
        notADuration(what, text, why),
      );
    });
  }
});

describe("toMs", () => {
  const accepted: [string | number, number][] = [
    [0, 0],
    [1, 1],
    [1500, 1500],
    [1.4, 1],
    [1.5, 2],
    [2.5, 3],
    [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    ["90s", 90_000],
    ["1h30m", 5_400_000],
    [" 250ms ", 250],
  ];
  for (const [value, ms] of accepted) {
    test(`${JSON.stringify(value)} is ${ms} ms`, () => {
      assert.equal(toMs(value, "--wait"), ms);
    });
  }

  const refusedNumbers = [-1, -0.5, -86_400_000, NaN, Infinity, -Infinity];
  for (const value of refusedNumbers) {
    test(`the number ${value} is refused`, () => {
      assertQuiesceError(
        () => toMs(value, "--wait"),
        ErrorCode.INVALID_INPUT,
        `--wait: ${value} is not a non-negative number of milliseconds`,
      );
    });
  }

  test("a string goes through parseDuration with the same flag name", () => {
    assertQuiesceError(
      () => toMs("90x", "--heartbeat"),
      ErrorCode.INVALID_INPUT,
      notADuration("--heartbeat", "90x", 'cannot read "90x"'),
    );
    assertQuiesceError(
      () => toMs("90", "--ttl"),
      ErrorCode.INVALID_INPUT,
      notADuration("--ttl", "90", "it has no unit"),
    );
  });
});

describe("formatDuration", () => {
  const cases: [number, string][] = [
    [0, "0ms"],
    [1, "1ms"],
    [250, "250ms"],
    [999, "999ms"],
    [999.4, "999ms"],
    [12.6, "13ms"],
    [1000, "1s"],
    [1500, "1.5s"],
    [1234, "1.23s"],
    [9990, "9.99s"],
    [1005, "1.01s"], // halves round up, in integers (toFixed said 1.00s), as PostgreSQL's round()
    [1015, "1.02s"],
    [9995, "10s"],
    [10_050, "10.1s"],
    [59_950, "60s"],
    [10_000, "10s"],
    [12_345, "12.3s"],
    [20_000, "20s"],
    [30_500, "30.5s"],
    [59_900, "59.9s"],
    [60_000, "1m00s"],
    [65_000, "1m05s"],
    [245_000, "4m05s"],
    [245_999, "4m05s"],
    [600_000, "10m00s"],
    [3_599_999, "59m59s"],
    [3_600_000, "1h00m"],
    [5_400_000, "1h30m"],
    [7_800_000, "2h10m"],
    [86_399_999, "23h59m"],
    [86_400_000, "1d0h"],
    [273_600_000, "3d4h"],
    [30 * 86_400_000, "30d0h"],
    [-1, "-1ms"],
    [-999, "-999ms"],
    [-1500, "-1.5s"],
    [-12_345, "-12.3s"],
    [-245_000, "-4m05s"],
    [-7_800_000, "-2h10m"],
    [-273_600_000, "-3d4h"],
  ];
  for (const [ms, text] of cases) {
    test(`${ms} ms is ${JSON.stringify(text)}`, () => {
      assert.equal(formatDuration(ms), text);
    });
  }

  const roundTrips = ["250ms", "1.5s", "12.3s", "4m05s", "2h10m", "3d4h"];
  for (const text of roundTrips) {
    test(`${JSON.stringify(text)} survives parse then format`, () => {
      assert.equal(formatDuration(parseDuration(text, "--ttl")), text);
    });
  }
});
