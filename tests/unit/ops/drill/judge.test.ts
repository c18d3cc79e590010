import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { EffectRecord } from "../../../../src/domain/journal-record.js";
import type { StartupReport } from "../../../../src/runtime/startup.js";
import { DemoProvider } from "../../../../src/ops/drill/demo-provider.js";
import {
  classify,
  judge,
  type Observation,
  type RowFacts,
} from "../../../../src/ops/drill/evaluate.js";
import { POINT_SPECS } from "../../../../src/ops/drill/scenarios.js";

const obs = (state: string | null, over: Partial<Observation> = {}): Observation => ({
  runtimeState: "RUNNING",
  runState: "active",
  runSeq: 2,
  effect: state === null ? null : ({ state, requestId: null } as EffectRecord),
  problems: [],
  requests: 1,
  lookups: 0,
  ...over,
});
const report = (recovered: StartupReport["recovered"] = []): StartupReport => ({
  runtimeId: "rt",
  found: "x",
  previous: { state: "RUNNING", incarnation: "r", maintenanceId: null, updatedAt: 0 },
  recovered,
  summary: "x",
});

describe("classify: what the evidence says recovery did", () => {
  const cases: [string, Observation, Observation, string][] = [
    [
      "replayed",
      obs("PLANNED", { requests: 0 }),
      obs("OBSERVED", { requests: 1 }),
      "replayed: PLANNED -> OBSERVED",
    ],
    [
      "reconciled by lookup, not re-sent",
      obs("DISPATCHED"),
      obs("OBSERVED", { lookups: 1 }),
      "reconciled by key lookup: DISPATCHED -> OBSERVED",
    ],
    [
      "re-sent: visible as a new request",
      obs("DISPATCHED"),
      obs("OBSERVED", { requests: 2 }),
      "re-sent with its key: DISPATCHED -> OBSERVED",
    ],
    [
      "quarantined",
      obs("DISPATCHED"),
      obs("NEEDS_REVIEW"),
      "quarantined: DISPATCHED -> NEEDS_REVIEW",
    ],
    [
      "from the record",
      obs("ACKNOWLEDGED"),
      obs("OBSERVED"),
      "completed from the intact record: ACKNOWLEDGED -> OBSERVED",
    ],
    [
      "completed work sent again",
      obs("OBSERVED"),
      obs("OBSERVED", { requests: 2 }),
      "completed work touched again: OBSERVED -> OBSERVED, 1 new request(s)",
    ],
    ["left unsettled", obs("DISPATCHED"), obs("DISPATCHED"), "unsettled: DISPATCHED -> DISPATCHED"],
    ["no effect", obs(null), obs(null), "no effect recorded (at the kill: none)"],
  ];
  for (const [name, crash, final, want] of cases)
    test(name, () => assert.equal(classify(crash, final, report()), want));
});

describe("judge: a row fails on any broken promise", () => {
  const base = (): RowFacts => {
    const provider = new DemoProvider("full");
    provider.executions.set("job:1:charge", 1);
    return {
      spec: POINT_SPECS["effect.after-dispatch"],
      mode: "full",
      killed: { code: null, signal: "SIGKILL", timedOut: false },
      crash: obs("DISPATCHED"),
      report: report(),
      restart: { code: 0, signal: null, timedOut: false },
      final: obs("OBSERVED", { lookups: 1, runtimeState: "STOPPED" }),
      provider,
      notes: [],
      failures: [],
    };
  };
  test("everything as expected: PASS", () => assert.deepEqual(judge(base()).failures, []));
  const breaks: [string, (f: RowFacts) => void, RegExp][] = [
    [
      "the process was never killed at the point",
      (f) => (f.killed = { code: 0, signal: null, timedOut: false }),
      /was not killed at effect.after-dispatch/,
    ],
    [
      "a different classification",
      (f) => (f.final = obs("NEEDS_REVIEW", { runtimeState: "STOPPED" })),
      /expected "reconciled by key lookup: DISPATCHED -> OBSERVED", observed "quarantined/,
    ],
    [
      "an effect delivered twice",
      (f) => f.provider.executions.set("job:1:charge", 2),
      /job:1:charge was delivered 2 times/,
    ],
    [
      "an effect never delivered",
      (f) => f.provider.executions.clear(),
      /job 1 was delivered 0 times, not once/,
    ],
    [
      "the restart failed",
      (f) => (f.restart = { code: 1, signal: null, timedOut: false }),
      /the restarted process exited 1/,
    ],
    [
      "the runtime did not stop",
      (f) => (f.final = obs("OBSERVED", { lookups: 1, runtimeState: "DRAINING" })),
      /ended DRAINING, not STOPPED/,
    ],
    [
      "a failure found while collecting evidence",
      (f) => f.failures.push("timed out waiting for x"),
      /timed out waiting for x/,
    ],
  ];
  for (const [name, brk, want] of breaks)
    test(`${name}: FAIL`, () => {
      const f = base();
      brk(f);
      const v = judge(f);
      assert.equal(v.pass, false);
      assert.match(v.failures.join("\n"), want);
    });
  test("checkpoint-write: the previous record must be intact and valid", () => {
    const f = {
      ...base(),
      spec: POINT_SPECS["journal.checkpoint-write"],
      crash: obs("ACKNOWLEDGED", { problems: ["effect k failed validation: checksum mismatch"] }),
    };
    f.final = obs("OBSERVED", { lookups: 1, runtimeState: "STOPPED" });
    assert.match(
      judge(f).failures.join(),
      /failed validation: effect k failed validation: checksum mismatch/,
    );
  });
  test("after-quiesced: a restart that recovers something is not clean", () => {
    const f = {
      ...base(),
      spec: POINT_SPECS["runtime.after-quiesced"],
      crash: obs("OBSERVED", { runtimeState: "QUIESCED" }),
    };
    f.final = obs("OBSERVED", { runtimeState: "STOPPED" });
    f.report = report([
      {
        runId: "r",
        before: "active",
        after: "suspended",
        seq: 3,
        effects: [],
        problems: [],
        error: null,
        summary: "",
      },
    ]);
    assert.match(judge(f).failures.join(), /recovered runs after a clean QUIESCED/);
  });
});
