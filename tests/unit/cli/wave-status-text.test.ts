import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { statusText } from "../../../src/cli/commands/wave-status.js";
import { countHosts, type HostState } from "../../../src/domain/wave-state.js";
import type { WaveStatus } from "../../../src/wave/wave-status.js";

/** A finished wave's status with these host states, as `waveStatus` shapes it. */
function statusOf(states: HostState[]): WaveStatus {
  const hosts = states.map((state, i) => ({
    host: `h${i + 1}`,
    group: null,
    state,
    attempts: state === "pending" ? 0 : 1,
    reason: state === "failed" ? "the patch command exited 3" : null,
    detail: null,
    runId: state === "pending" ? null : `wave:w:h${i + 1}`,
    startedAt: null,
    finishedAt: null,
    durationMs: state === "pending" ? null : 1200,
  }));
  const counts = countHosts(states);
  return {
    wave: {
      name: "w",
      state: "halted",
      reason: "1 host failed",
      hosts: states.length,
      batch: "10",
      batchSize: 10,
      window: null,
      maxPerGroup: null,
      createdAt: null,
      startedAt: null,
      finishedAt: null,
      settings: null,
    },
    counts,
    budget: { spec: "0", maxFailures: 0, failed: counts.failed, left: -1, spent: true },
    holder: null,
    agent: null,
    eta: null,
    review: [],
    hosts,
    storeNow: new Date(0).toISOString(),
  };
}

const tableRows = (text: string) => text.split("\n").filter((l) => /^h\d+ /.test(l));

describe("wave status as text", () => {
  test("a small wave lists every host past pending", () => {
    const text = statusText(statusOf(["succeeded", "failed", "pending"]), false);
    assert.deepEqual(
      tableRows(text).map((l) => l.split(/\s+/)[0]),
      ["h1", "h2"],
    );
    assert.doesNotMatch(text, /not listed/);
  });

  test("a big wave lists the hosts that need a look and counts the succeeded ones", () => {
    const states: HostState[] = [...Array<HostState>(80).fill("succeeded"), "failed", "pending"];
    const text = statusText(statusOf(states), false);
    assert.deepEqual(
      tableRows(text).map((l) => l.split(/\s+/)[0]),
      ["h81"],
    );
    assert.match(text, /80 succeeded host\(s\) not listed \(--all lists every host\)/);
    assert.equal(tableRows(statusText(statusOf(states), true)).length, 82, "--all lists all");
  });
});
