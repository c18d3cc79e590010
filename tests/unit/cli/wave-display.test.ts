import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { bar, countsText, progressLines } from "../../../src/cli/wave-display.js";
import { countHosts, type HostState } from "../../../src/domain/wave-state.js";

describe("the live wave display", () => {
  const states: HostState[] = [
    ...Array<HostState>(6).fill("succeeded"),
    "failed",
    "running",
    "running",
    "pending",
  ];
  const view = {
    wave: "w1",
    phase: "batches",
    batch: 3,
    hosts: 10,
    counts: countHosts(states),
    maxFailures: 2,
    running: [
      { host: "h8", forMs: 1500 },
      { host: "h9", forMs: 250 },
    ],
    eta: null,
  };
  test("bar", () => {
    assert.equal(bar(0, 10, 10), "[----------]");
    assert.equal(bar(7, 10, 10), "[#######---]");
    assert.equal(bar(0, 0, 4), "[####]");
  });
  test("counts name only the states that have hosts", () =>
    assert.equal(countsText(view.counts), "1 pending, 2 running, 6 succeeded, 1 failed"));
  test("the block: progress, counts against the budget, hosts in flight, ETA", () =>
    assert.deepEqual(progressLines(view), [
      "wave w1  [#####################---------] 7/10  batch 3  (batches)",
      "1 pending, 2 running, 6 succeeded, 1 failed; failed 1 of at most 2",
      "in flight: h8 (1.5s), h9 (250ms)",
      "ETA: after the first host finishes",
    ]));
  test("lines are cut to the terminal's width", () =>
    assert.ok(progressLines(view, 30).every((l) => l.length <= 30)));
  test("a spent budget says so", () =>
    assert.match(progressLines({ ...view, maxFailures: 0 })[1]!, /\(budget spent\)$/));
});
