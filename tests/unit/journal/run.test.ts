import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { ErrorCode, isQuiesceError, QuiesceError } from "../../../src/domain/errors.js";
import { EventKind } from "../../../src/domain/event.js";
import { effectProblem } from "../../../src/domain/journal-record.js";
import { Journal } from "../../../src/journal/journal.js";
import type { Lease } from "../../../src/lease/lease.js";
import { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";
import { BOTH, FakeProvider, IDEMPOTENT, LOOKUP, NEITHER, tempStore } from "./fixtures.js";

describe("Run: the effect protocol under a lease", () => {
  let env: ReturnType<typeof tempStore>;
  let lease: Lease;
  beforeEach(async () => {
    env = tempStore();
    lease = await env.leases.acquire("runtime:rt", { ttl: "10s" });
  });
  afterEach(() => env.cleanup());
  const journal = (...providers: FakeProvider[]) =>
    new Journal(env.store, lease, { runtimeId: "rt", providers });

  test("PLANNED -> DISPATCHED -> ACKNOWLEDGED -> OBSERVED: four commits, the result returned and recorded", async () => {
    const p = new FakeProvider("pay", BOTH);
    p.fallback = "pending";
    const j = journal(p);
    const run = await j.createRun({ runId: "run-1" });
    const before = j.writer.commits;
    const result = await run.effect({
      key: "invoice:1:send",
      provider: "pay",
      request: { amount: 5 },
      context: { url: "https://shop/checkout", pageHash: "ab12" },
    });
    assert.deepEqual(result, { done: "invoice:1:send", request: { amount: 5 } });
    assert.equal(j.writer.commits - before, 4);
    const snap = (await env.store.journal.getRun("run-1"))!;
    const e = snap.effects[0]!;
    assert.deepEqual(
      [e.state, e.prevState, e.seq, e.attempt, e.requestId],
      ["OBSERVED", "ACKNOWLEDGED", 4, 1, "req-1"],
    );
    assert.equal(e.context, '{"url":"https://shop/checkout","pageHash":"ab12"}');
    assert.equal(effectProblem(e, snap.run.seq), null);
    assert.equal(p.calls.length, 1);
    assert.equal(p.lookups.length, 1, "the pending outcome was read with the lookup");
    assert.deepEqual(run.result("invoice:1:send"), result);
  });

  test("a run told to stop sends nothing new: the effect stays PLANNED (replayable) and the stop's reason is thrown", async () => {
    const p = new FakeProvider("pay", NEITHER);
    const run = await journal(p).createRun({ runId: "run-stop" });
    run.abort(new QuiesceError(ErrorCode.RUN_SUSPENDED, "the wave is stopping"));
    await assert.rejects(
      run.effect({ key: "invoice:2:send", provider: "pay", request: {} }),
      (e) => isQuiesceError(e, "RUN_SUSPENDED") && /the wave is stopping/.test(e.message),
    );
    assert.equal(p.calls.length, 0, "no request left");
    const e = (await env.store.journal.getRun("run-stop"))!.effects[0]!;
    assert.equal(e.state, "PLANNED");
    assert.equal(e.attempt, 0);
  });

  test("no request leaves before its DISPATCHED record is durable (I8): another connection sees it at send time", async () => {
    const p = new FakeProvider("pay", NEITHER);
    const other = new SqliteStore(env.path);
    const seen: string[] = [];
    p.onDispatch = async (req) => {
      const snap = await other.journal.getRun(req.key.split("/")[0]!);
      seen.push(snap!.effects.find((e) => e.key === req.key)!.state);
    };
    const j = journal(p);
    const runs = await Promise.all(
      Array.from({ length: 16 }, (_, i) => j.createRun({ runId: `r${i}` })),
    );
    await Promise.all(runs.map((r) => r.effect({ key: `${r.id}/charge`, provider: "pay" })));
    await other.close();
    assert.equal(seen.length, 16);
    assert.ok(
      seen.every((s) => s === "DISPATCHED"),
      `states seen at send time: ${seen.join(", ")}`,
    );
    assert.ok(
      j.writer.commits < 16 * 4,
      `16 concurrent runs shared commits (${j.writer.commits} for 64 writes)`,
    );
  });

  test("a key used twice in one run is refused; the record is unchanged", async () => {
    const p = new FakeProvider("pay", BOTH);
    const run = await journal(p).createRun({ runId: "run-1" });
    await run.effect({ key: "invoice:1:send", provider: "pay", request: 1 });
    await assert.rejects(
      run.effect({ key: "invoice:1:send", provider: "pay", request: 2 }),
      (e) =>
        isQuiesceError(e, "DUPLICATE_EFFECT") && /already planned in run run-1/.test(e.message),
    );
    const e = (await env.store.journal.getRun("run-1"))!.effects;
    assert.equal(e.length, 1);
    assert.equal(e[0]!.request, "1");
    assert.equal(p.executed("invoice:1:send"), 1);
  });

  const unknownFate: [string, FakeProvider["capabilities"], string, number, number][] = [
    ["lookup: absent, so sent again", LOOKUP, "OBSERVED", 2, 1],
    ["idempotent: re-sent with the same key", IDEMPOTENT, "OBSERVED", 2, 1],
    ["neither: quarantined", NEITHER, "NEEDS_REVIEW", 1, 0],
  ];
  for (const [name, caps, state, calls, executions] of unknownFate)
    test(`a dispatch that fails before landing, provider ${name}`, async () => {
      const p = new FakeProvider("pay", caps);
      p.script = ["throw-lost"];
      const run = await journal(p).createRun({ runId: "run-1" });
      const r = run.effect({ key: "k", provider: "pay" });
      if (state === "NEEDS_REVIEW")
        await assert.rejects(r, (e) => isQuiesceError(e, "NEEDS_REVIEW"));
      else await r;
      const snap = (await env.store.journal.getRun("run-1"))!;
      assert.equal(snap.effects[0]!.state, state);
      assert.equal(p.calls.length, calls);
      assert.equal(p.executed("k"), executions);
      if (state === "NEEDS_REVIEW") {
        assert.equal(snap.run.state, "needs_review");
        assert.match(snap.run.reviewReason ?? "", /effect k quarantined/);
        const ev = await env.store.listEvents({ scope: "runtime:rt" });
        assert.ok(ev.some((x) => x.kind === EventKind.EffectQuarantined));
      }
    });

  test("a dispatch that landed but lost its answer is restored by lookup, never executed twice", async () => {
    const p = new FakeProvider("pay", LOOKUP);
    p.script = ["throw-landed"];
    const run = await journal(p).createRun({ runId: "run-1" });
    await run.effect({ key: "k", provider: "pay" });
    assert.equal(p.calls.length, 1);
    assert.equal(p.executed("k"), 1);
  });

  test("a zombie (its lease moved on) dispatches nothing and writes nothing (I3, I4)", async () => {
    const p = new FakeProvider("pay", BOTH);
    const run = await journal(p).createRun({ runId: "run-1" });
    await env.leases.store.leases.release({
      scope: "runtime:rt",
      token: lease.token,
      runId: null,
      host: null,
      pid: null,
      reason: "operator",
    });
    const other = await env.leases.acquire("runtime:rt", { ttl: "10s", keepAlive: false });
    await assert.rejects(run.effect({ key: "k", provider: "pay" }), (e) =>
      isQuiesceError(e, "LEASE_LOST"),
    );
    assert.equal(p.calls.length, 0, "nothing was sent");
    assert.equal(lease.signal.aborted, true, "the holder gave the lease up");
    const snap = (await env.store.journal.getRun("run-1"))!;
    assert.deepEqual([snap.run.seq, snap.effects.length], [0, 0]);
    const ev = await env.store.listEvents({ scope: "runtime:rt" });
    assert.ok(ev.some((x) => x.kind === EventKind.FencedWriteRejected && x.token === lease.token));
    assert.equal(other.token, lease.token + 1);
    await assert.rejects(run.checkpoint({ step: 2 }), (e) => isQuiesceError(e, "LEASE_LOST"));
  });

  test("checkpoint saves the run's data; complete refuses while an effect is open", async () => {
    const p = new FakeProvider("pay", NEITHER);
    p.script = ["throw-lost"];
    const run = await journal(p).createRun({ runId: "run-1", checkpoint: { step: 0 } });
    await run.checkpoint({ step: 1, next: "pay" });
    assert.deepEqual(run.checkpointData(), { step: 1, next: "pay" });
    await assert.rejects(run.effect({ key: "k", provider: "pay" }));
    await assert.rejects(run.complete(), (e) => isQuiesceError(e, "NEEDS_REVIEW"));
    const ok = await journal(new FakeProvider("mail", BOTH)).createRun({ runId: "run-2" });
    await ok.effect({ key: "m", provider: "mail" });
    await ok.complete({ sent: true });
    const snap = (await env.store.journal.getRun("run-2"))!;
    assert.deepEqual([snap.run.state, snap.run.checkpoint], ["completed", '{"sent":true}']);
  });

  test("bad input: unknown provider, bad key", async () => {
    const run = await journal(new FakeProvider("pay", BOTH)).createRun();
    await assert.rejects(
      run.effect({ key: "k", provider: "nope" }),
      /no provider named "nope" is registered \(known: pay\)/,
    );
    await assert.rejects(run.effect({ key: "has space", provider: "pay" }), (e) =>
      isQuiesceError(e, "INVALID_INPUT"),
    );
  });
});
