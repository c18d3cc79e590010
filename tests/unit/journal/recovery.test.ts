import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import type { EffectState } from "../../../src/domain/effect-state.js";
import { isQuiesceError } from "../../../src/domain/errors.js";
import { EventKind } from "../../../src/domain/event.js";
import { contentOf, sealEffect, type EffectContent } from "../../../src/domain/journal-record.js";
import { Journal } from "../../../src/journal/journal.js";
import { resolveEffect } from "../../../src/journal/resolve.js";
import type { Lease } from "../../../src/lease/lease.js";
import type { JournalWrite } from "../../../src/store/journal-store.js";
import { BOTH, FakeProvider, IDEMPOTENT, LOOKUP, NEITHER, tempStore } from "./fixtures.js";

const SCOPE = "runtime:rt";

/**
 * Recovery, as a restarted process sees it: a run left by a holder that died (token 1) with
 * its effect in some state; a new holder (token 2) recovers it.
 */
describe("recoverRun (I9)", () => {
  let env: ReturnType<typeof tempStore>;
  beforeEach(() => (env = tempStore()));
  afterEach(() => env.cleanup());

  /** Writes a run whose effect `k` reached `state` under token 1, then hands the lease on. */
  async function leftBehind(state: EffectState, over: Partial<EffectContent> = {}): Promise<Lease> {
    const old = await env.leases.acquire(SCOPE, { ttl: "10s", keepAlive: false });
    const t = old.token;
    const base: EffectContent = {
      runId: "run-1",
      key: "k",
      ordinal: 0,
      provider: "pay",
      state: "PLANNED",
      prevState: null,
      seq: 1,
      attempt: 0,
      token: t,
      request: '{"n":1}',
      requestId: null,
      result: null,
      context: null,
      reviewReason: null,
    };
    const path: [EffectState, Partial<EffectContent>][] = [
      ["DISPATCHED", { attempt: 1 }],
      ["ACKNOWLEDGED", { requestId: "req-0", result: over.result ?? null }],
      ["OBSERVED", { result: '{"done":true}' }],
    ];
    const writes: JournalWrite[] = [
      {
        kind: "create_run",
        token: t,
        run: { runId: "run-1", runtimeId: "rt", scope: SCOPE, checkpoint: null },
      },
    ];
    let cur = sealEffect(base);
    writes.push({
      kind: "effect",
      token: t,
      runId: "run-1",
      expectedSeq: 0,
      seq: 1,
      from: null,
      effect: cur,
    });
    for (const [to, patch] of path) {
      if (cur.state === state) break;
      const content = contentOf(cur);
      const next = sealEffect({
        ...content,
        ...patch,
        state: to,
        prevState: cur.state,
        seq: cur.seq + 1,
      });
      writes.push({
        kind: "effect",
        token: t,
        runId: "run-1",
        expectedSeq: cur.seq,
        seq: next.seq,
        from: cur.state,
        effect: next,
      });
      cur = next;
    }
    for (const w of writes) assert.ok((await env.store.journal.apply([w]))[0]!.ok);
    await old.release("the process died");
    return env.leases.acquire(SCOPE, { ttl: "10s" });
  }

  const cases: [
    EffectState,
    string,
    FakeProvider["capabilities"],
    boolean,
    EffectState,
    number,
    number,
  ][] = [
    // crash state, provider, caps, provider already has it, final state, sends, lookups
    ["PLANNED", "both", BOTH, false, "OBSERVED", 1, 1],
    ["PLANNED", "neither", NEITHER, false, "OBSERVED", 1, 0],
    ["DISPATCHED", "lookup, it landed", LOOKUP, true, "OBSERVED", 0, 1],
    ["DISPATCHED", "lookup, it never landed", LOOKUP, false, "OBSERVED", 1, 2],
    ["DISPATCHED", "idempotent", IDEMPOTENT, true, "OBSERVED", 1, 0],
    ["DISPATCHED", "neither", NEITHER, true, "NEEDS_REVIEW", 0, 0],
    ["ACKNOWLEDGED", "lookup", LOOKUP, true, "OBSERVED", 0, 1],
    ["ACKNOWLEDGED", "neither, no result recorded", NEITHER, true, "NEEDS_REVIEW", 0, 0],
    ["OBSERVED", "both", BOTH, true, "OBSERVED", 0, 0],
  ];
  for (const [crash, name, caps, landed, final, sends, lookups] of cases)
    test(`${crash}, provider ${name}: ${final}, ${sends} send(s), ${lookups} lookup(s)`, async () => {
      const lease = await leftBehind(crash);
      const p = new FakeProvider("pay", caps);
      p.fallback = caps.statusLookup ? "pending" : "final";
      if (landed) p.landed.set("k", { requestId: "req-0", result: { done: true } });
      const j = new Journal(env.store, lease, { runtimeId: "rt", providers: [p] });
      const r = await j.recover("run-1");
      const snap = (await env.store.journal.getRun("run-1"))!;
      assert.equal(snap.effects[0]!.state, final);
      assert.equal(p.calls.length, sends, "sends");
      assert.equal(p.lookups.length, lookups, "lookups");
      assert.equal(r.after, final === "NEEDS_REVIEW" ? "needs_review" : "suspended");
      assert.equal(snap.run.state, r.after);
      if (crash !== final)
        assert.deepEqual(
          r.effects.map((e) => [e.from, e.to]),
          [[crash, final]],
        );
      if (crash === "OBSERVED") assert.equal(r.effects.length, 0, "OBSERVED is never touched");
    });

  test("ACKNOWLEDGED with its result recorded, no lookup: completed from the record", async () => {
    const lease = await leftBehind("ACKNOWLEDGED", { result: '{"done":true}' });
    const p = new FakeProvider("pay", NEITHER);
    const r = await new Journal(env.store, lease, { runtimeId: "rt", providers: [p] }).recover(
      "run-1",
    );
    assert.deepEqual(
      r.effects.map((e) => e.to),
      ["OBSERVED"],
    );
    assert.equal(p.calls.length, 0);
  });

  test("a record that fails validation stops recovery: NEEDS_REVIEW, reason recorded, nothing advanced", async () => {
    const lease = await leftBehind("DISPATCHED");
    const tampered = (await env.store.journal.getRun("run-1"))!.effects[0]!;
    const raw = (await import("better-sqlite3")).default;
    const db = new raw(env.path);
    db.prepare("UPDATE quiesce_effects SET request = '{\"n\":1000}' WHERE key = 'k'").run();
    db.close();
    const p = new FakeProvider("pay", BOTH);
    const r = await new Journal(env.store, lease, { runtimeId: "rt", providers: [p] }).recover(
      "run-1",
    );
    assert.equal(r.after, "needs_review");
    assert.match(r.problems.join(), /effect k failed validation: checksum mismatch/);
    const snap = (await env.store.journal.getRun("run-1"))!;
    assert.equal(snap.effects[0]!.state, "DISPATCHED");
    assert.equal(snap.effects[0]!.checksum, tampered.checksum, "the effect was not rewritten");
    assert.match(
      snap.run.reviewReason ?? "",
      /recovery refused to advance: effect k failed validation/,
    );
    assert.equal(p.calls.length + p.lookups.length, 0, "the provider was not contacted");
    const ev = await env.store.listEvents({ scope: SCOPE });
    assert.ok(ev.some((e) => e.kind === EventKind.RunNeedsReview));
  });

  test("a human resolves the quarantined effect; the run resumes and does not send it again", async () => {
    const lease = await leftBehind("DISPATCHED");
    const p = new FakeProvider("pay", NEITHER);
    const j = new Journal(env.store, lease, { runtimeId: "rt", providers: [p] });
    await j.recover("run-1");
    await assert.rejects(j.resume("run-1"), (e) => isQuiesceError(e, "NEEDS_REVIEW"));
    await assert.rejects(
      resolveEffect(env.store, {
        runId: "run-1",
        key: "nope",
        as: "observed",
        reason: "x",
        operator: "ops",
      }),
      /run run-1 has no effect nope \(its effects: k\)/,
    );
    const r = await resolveEffect(env.store, {
      runId: "run-1",
      key: "k",
      as: "observed",
      reason: "the bank statement shows it",
      result: { paid: 5 },
      operator: "ops@h",
    });
    assert.deepEqual([r.effect.state, r.run.state, r.remaining], ["OBSERVED", "suspended", []]);
    const ev = (await env.store.listEvents({ scope: SCOPE })).find(
      (e) => e.kind === EventKind.EffectResolved,
    )!;
    assert.match(
      ev.message,
      /ops@h resolved effect k of run run-1 as observed: the bank statement shows it/,
    );
    assert.equal((ev.detail.before as { state: string }).state, "NEEDS_REVIEW");
    const run = await j.resume("run-1");
    assert.deepEqual(await run.outcome("k"), { paid: 5 });
    assert.equal(p.calls.length, 0);
    await assert.rejects(
      resolveEffect(env.store, {
        runId: "run-1",
        key: "k",
        as: "not-sent",
        reason: "x",
        operator: "ops",
      }),
      /only a quarantined effect \(NEEDS_REVIEW\) or a record that failed validation can be resolved/,
    );
  });

  test("resolved as not-sent: PLANNED again, and the resumed run sends it", async () => {
    const lease = await leftBehind("DISPATCHED");
    const p = new FakeProvider("pay", NEITHER);
    const j = new Journal(env.store, lease, { runtimeId: "rt", providers: [p] });
    await j.recover("run-1");
    const r = await resolveEffect(env.store, {
      runId: "run-1",
      key: "k",
      as: "not-sent",
      reason: "no such charge",
      operator: "ops",
    });
    assert.equal(r.effect.state, "PLANNED");
    const run = await j.resume("run-1");
    assert.equal(p.calls.length, 1, "resume replays the planned effect");
    assert.deepEqual(await run.outcome("k"), { done: "k", request: { n: 1 } });
  });
});
