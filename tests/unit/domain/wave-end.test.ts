import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { waveEnd, type EndFacts } from "../../../src/domain/wave-end.js";
import { countHosts, type HostState } from "../../../src/domain/wave-state.js";

const all = (s: HostState, n = 3) => Array<HostState>(n).fill(s);
const facts = (states: HostState[], over: Partial<EndFacts> = {}): EndFacts => ({
  counts: countHosts(states),
  error: null,
  halted: null,
  stop: null,
  blocked: [],
  ...over,
});

describe("waveEnd: the wave's state, reason and the agent's exit code", () => {
  const cases: [string, EndFacts, string, number, RegExp][] = [
    ["every host succeeded", facts(all("succeeded")), "completed", 0, /^3 succeeded, 0 failed$/],
    [
      "done, some failed within the budget",
      facts(["succeeded", "failed"]),
      "completed",
      1,
      /1 failed/,
    ],
    [
      "hosts left skipped (busy)",
      facts(["succeeded", "skipped"]),
      "stopped",
      75,
      /1 skipped \(busy\)/,
    ],
    [
      "a stop on request",
      facts(["succeeded", "pending"], { stop: { reason: "stop requested by ops", signal: null } }),
      "stopped",
      0,
      /^stop requested by ops; 1 succeeded, 0 failed; 1 pending/,
    ],
    [
      "a stop by SIGTERM",
      facts(["pending"], { stop: { reason: "SIGTERM received", signal: 15 } }),
      "stopped",
      143,
      /^SIGTERM received/,
    ],
    [
      "a stop that came as the last host finished: completed all the same",
      facts(all("succeeded"), { stop: { reason: "SIGINT", signal: 2 } }),
      "completed",
      0,
      /succeeded/,
    ],
    [
      "halted wins over a stop",
      facts(["failed", "pending"], { halted: "budget spent", stop: { reason: "x", signal: null } }),
      "halted",
      1,
      /^budget spent$/,
    ],
    [
      "an error wins over everything",
      facts(all("succeeded"), { error: "disk full", halted: "x" }),
      "stopped",
      1,
      /^stopped by an error: disk full$/,
    ],
    [
      "a leftover host still busy",
      facts(["unfinished", "pending"], { blocked: ["h3"] }),
      "stopped",
      75,
      /^host\(s\) h3 left mid-way by an earlier agent are still busy/,
    ],
  ];
  for (const [name, f, state, code, reason] of cases)
    test(name, () => {
      const e = waveEnd(f);
      assert.equal(e.state, state);
      assert.equal(e.exitCode, code);
      assert.match(e.reason, reason);
    });
});
