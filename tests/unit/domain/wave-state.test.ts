import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  HOST_STATES,
  WAVE_STATES,
  assertHostTransition,
  canHostTransition,
  canWaveTransition,
  countHosts,
  isFinalHostState,
  isLeftover,
  isStartable,
} from "../../../src/domain/wave-state.js";
import { assertQuiesceError } from "../helpers.js";

/** Every legal host edge; anything else must be refused. */
const HOST_LEGAL = [
  "pending>running",
  "pending>skipped",
  "skipped>running",
  "skipped>skipped",
  "running>succeeded",
  "running>failed",
  "running>unfinished",
  "running>needs_review",
  "unfinished>running",
  "unfinished>unfinished",
  "needs_review>running",
  "needs_review>needs_review",
];

describe("host in a wave: every pair of states", () => {
  for (const from of HOST_STATES)
    for (const to of HOST_STATES) {
      const legal = HOST_LEGAL.includes(`${from}>${to}`);
      test(`${from} -> ${to}: ${legal ? "legal" : "refused"}`, () =>
        assert.equal(canHostTransition(from, to), legal));
    }
  test("succeeded and failed have no way out (a succeeded host is never patched again)", () => {
    for (const to of HOST_STATES) {
      assert.equal(canHostTransition("succeeded", to), false);
      assert.equal(canHostTransition("failed", to), false);
    }
  });
  test("succeeded and failed are reached only from running", () => {
    for (const from of HOST_STATES)
      for (const to of ["succeeded", "failed"] as const)
        assert.equal(canHostTransition(from, to), from === "running");
  });
  test("assertHostTransition names the host", () =>
    assertQuiesceError(
      () => assertHostTransition("db-7", "succeeded", "running"),
      "INVALID_TRANSITION",
      "host db-7: succeeded -> running is not a legal transition",
    ));
});

describe("host state classes", () => {
  const table: [string, boolean, boolean, boolean][] = [
    // state, final, leftover, startable
    ["pending", false, false, true],
    ["running", false, true, false],
    ["succeeded", true, false, false],
    ["failed", true, false, false],
    ["unfinished", false, true, false],
    ["needs_review", false, true, false],
    ["skipped", false, false, true],
  ];
  for (const [s, final, leftover, startable] of table)
    test(`${s}: final ${final}, leftover ${leftover}, startable ${startable}`, () => {
      const st = s as (typeof HOST_STATES)[number];
      assert.equal(isFinalHostState(st), final);
      assert.equal(isLeftover(st), leftover);
      assert.equal(isStartable(st), startable);
    });
  test("every state is in exactly one class", () => {
    for (const s of HOST_STATES)
      assert.equal([isFinalHostState(s), isLeftover(s), isStartable(s)].filter(Boolean).length, 1);
  });
});

const WAVE_LEGAL = [
  "created>running",
  "running>running",
  "running>stopped",
  "running>halted",
  "running>completed",
  "stopped>running",
  "halted>running",
];

describe("the wave: every pair of states", () => {
  for (const from of WAVE_STATES)
    for (const to of WAVE_STATES) {
      const legal = WAVE_LEGAL.includes(`${from}>${to}`);
      test(`${from} -> ${to}: ${legal ? "legal" : "refused"}`, () =>
        assert.equal(canWaveTransition(from, to), legal));
    }
});

test("countHosts counts every state, zero included", () => {
  const c = countHosts(["pending", "pending", "failed", "succeeded"]);
  assert.deepEqual(c, {
    pending: 2,
    running: 0,
    succeeded: 1,
    failed: 1,
    unfinished: 0,
    needs_review: 0,
    skipped: 0,
  });
});
