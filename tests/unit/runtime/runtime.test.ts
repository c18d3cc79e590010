import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { isQuiesceError } from "../../../src/domain/errors.js";
import { EventKind } from "../../../src/domain/event.js";
import type { Run } from "../../../src/journal/run.js";
import { runtimeStatus } from "../../../src/runtime/maintenance.js";
import { startRuntime, type RuntimeOptions } from "../../../src/runtime/startup.js";
import { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";
import { BOTH, FakeProvider, tempStore } from "../journal/fixtures.js";

const until = async (what: string, check: () => boolean | Promise<boolean>) => {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe("Runtime: the maintenance-window protocol", () => {
  let env: ReturnType<typeof tempStore>;
  let provider: FakeProvider;
  beforeEach(() => {
    env = tempStore();
    provider = new FakeProvider("pay", BOTH);
  });
  afterEach(() => env.cleanup());
  const start = (o: Partial<RuntimeOptions> = {}) =>
    startRuntime(env.leases, { id: "agent-1", providers: [provider], pollMs: 20, ...o });
  const transitions = async () =>
    (await env.store.listEvents({ scope: "runtime:agent-1" }))
      .filter((e) => e.kind === EventKind.RuntimeTransition)
      .map((e) => `${String(e.detail.from)}>${String(e.detail.to)}`);

  test("RUNNING -> DRAINING -> QUIESCED -> STOPPED: new work refused while draining, the run stops at its next checkpoint", async () => {
    const rt = await start();
    assert.equal(rt.startup.found, "new runtime");
    provider.script = ["hold"];
    const run = await rt.startRun({ runId: "run-1" });
    const first = run.effect({ key: "a", provider: "pay" });
    await until("the effect to be sent", () => provider.calls.length === 1);
    const drained = rt.drain({ maintenanceId: "mw-1", drainTimeoutMs: 60_000 });
    await until("DRAINING", () => rt.state === "DRAINING");
    assert.equal(rt.accepting, false);
    const refused = await rt.tryStartRun({ runId: "run-2" });
    assert.ok(!refused.ok && refused.reason === "draining");
    assert.match(
      !refused.ok ? refused.message : "",
      /runtime agent-1 is draining \(maintenance mw-1\): it accepts no new work \(run run-2 refused\)/,
    );
    await assert.rejects(rt.startRun(), (e) => isQuiesceError(e, "WORK_REFUSED"));
    assert.equal(await env.store.journal.getRun("run-2"), null, "no run was created");
    assert.equal(rt.state, "DRAINING", "not quiesced while an effect is in flight");
    provider.release();
    await first;
    await assert.rejects(run.effect({ key: "b", provider: "pay" }), (e) =>
      isQuiesceError(e, "RUN_SUSPENDED"),
    );
    const outcome = await drained;
    assert.deepEqual(outcome, { state: "STOPPED", leaseLost: false, reason: null });
    assert.deepEqual(await transitions(), [
      "null>RUNNING",
      "RUNNING>DRAINING",
      "DRAINING>QUIESCED",
      "QUIESCED>STOPPED",
    ]);
    assert.equal((await env.store.journal.getRun("run-1"))!.run.state, "suspended");
    assert.equal(
      (await env.store.getLease("runtime:agent-1")).lease,
      null,
      "the lease is released",
    );
    const ev = await env.store.listEvents({ scope: "runtime:agent-1" });
    assert.equal(ev.filter((e) => e.kind === EventKind.RuntimeWorkRefused).length, 2);
  });

  type Deadline = [
    string,
    Record<string, unknown>,
    "in-flight" | "between",
    string,
    string,
    string,
  ];
  const deadlines: Deadline[] = [
    // name, policy, where the run is at the deadline, effect state, run state, runtime state
    [
      "quarantine an unacknowledged effect",
      {},
      "in-flight",
      "NEEDS_REVIEW",
      "needs_review",
      "NEEDS_REVIEW",
    ],
    [
      "unknown_side_effects: fail",
      { unknown_side_effects: "fail" },
      "in-flight",
      "NEEDS_REVIEW",
      "failed",
      "NEEDS_REVIEW",
    ],
    ["checkpoint_and_stop between effects", {}, "between", "OBSERVED", "suspended", "STOPPED"],
    [
      "abort_and_review between effects",
      { on_deadline: "abort_and_review" },
      "between",
      "OBSERVED",
      "needs_review",
      "NEEDS_REVIEW",
    ],
  ];
  for (const [name, policy, where, effectState, runState, runtimeState] of deadlines)
    test(`drain deadline, ${name}: effect ${effectState}, run ${runState}, runtime ${runtimeState}`, async () => {
      const rt = await start({ policy: { drain_timeout: "150ms", ...policy } });
      const run: Run = await rt.startRun({ runId: "run-1" });
      let work: Promise<unknown>;
      if (where === "in-flight") {
        provider.script = ["hold"];
        work = run.effect({ key: "a", provider: "pay" });
        await until("the effect to be sent", () => provider.calls.length === 1);
      } else {
        await run.effect({ key: "a", provider: "pay" });
        work = new Promise((_, reject) =>
          run.signal.addEventListener("abort", () => reject(run.signal.reason as Error)),
        );
      }
      const outcome = await rt.drain({ maintenanceId: "mw-1" });
      assert.equal(outcome.state, runtimeState);
      provider.release(); // the provider answers after the deadline
      await assert.rejects(work);
      const snap = (await env.store.journal.getRun("run-1"))!;
      assert.deepEqual([snap.effects[0]!.state, snap.run.state], [effectState, runState]);
      const rec = (await env.store.journal.getRuntime("agent-1")).runtime!;
      assert.equal(rec.state, runtimeState);
      assert.match(rec.note ?? "", /^drain deadline passed: /);
      if (where === "in-flight") {
        await until("the late acknowledgement to be recorded", async () =>
          (await env.store.listEvents({ scope: "runtime:agent-1" })).some(
            (e) => e.kind === EventKind.EffectLateAck,
          ),
        );
        assert.equal(
          (await env.store.journal.getRun("run-1"))!.effects[0]!.state,
          "NEEDS_REVIEW",
          "a late ack changes nothing",
        );
      }
    });

  test("a maintenance request from another connection is noticed and drains the runtime", async () => {
    const rt = await start();
    const other = new SqliteStore(env.path);
    const r = await other.journal.requestMaintenance({
      runtimeId: "agent-1",
      maintenanceId: "mw-7",
      drainTimeoutMs: 5000,
      by: "ops@h",
    });
    assert.ok(r.ok);
    const outcome = await rt.done;
    assert.equal(outcome.state, "STOPPED");
    const rec = (await other.journal.getRuntime("agent-1")).runtime!;
    assert.deepEqual([rec.state, rec.maintenanceId, rec.request], ["STOPPED", "mw-7", null]);
    const status = await runtimeStatus(other, rec);
    assert.deepEqual([status.state, status.lease.state, status.activeRuns], ["STOPPED", "free", 0]);
    await other.close();
  });

  test("a new process finds the record of one that died while RUNNING and recovers its runs first", async () => {
    const a = await start();
    provider.script = ["throw-landed"];
    const run = await a.startRun({ runId: "run-1" });
    provider.onDispatch = () => {
      // The process "dies" here: its lease goes away without any record being written.
      a.lease.markLost("simulated death");
    };
    await assert.rejects(run.effect({ key: "a", provider: "pay" }));
    await env.store.release({
      scope: "runtime:agent-1",
      token: a.lease.token,
      runId: null,
      host: null,
      pid: null,
      reason: "test",
    });
    provider.onDispatch = null;
    const b = await start();
    assert.match(b.startup.found, /died while RUNNING/);
    assert.deepEqual(
      b.startup.recovered.map((r) => [r.runId, r.after, r.effects.map((e) => `${e.from}>${e.to}`)]),
      [["run-1", "suspended", ["DISPATCHED>OBSERVED"]]],
    );
    assert.equal(provider.executed("a"), 1);
    assert.deepEqual(
      (await b.resumable()).map((r) => r.runId),
      ["run-1"],
    );
    const resumed = await b.resume("run-1");
    assert.deepEqual(await resumed.outcome("a"), { done: "a", request: null });
    await resumed.complete();
    assert.equal((await b.stop()).state, "STOPPED");
  });

  test("losing the lease ends the runtime and aborts its runs", async () => {
    const rt = await start();
    const run = await rt.startRun();
    rt.lease.markLost("store refused the renewal");
    const outcome = await rt.done;
    assert.deepEqual([outcome.leaseLost, outcome.reason], [true, "store refused the renewal"]);
    assert.equal(run.signal.aborted, true);
    assert.equal(rt.accepting, false);
  });
});
