import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { EffectState } from "../../src/domain/effect-state.js";
import { EventKind } from "../../src/domain/event.js";
import { contentOf, sealEffect, type EffectContent } from "../../src/domain/journal-record.js";
import { DEFAULT_POLICY } from "../../src/domain/maintenance-policy.js";
import type { RuntimeWrite } from "../../src/domain/runtime-record.js";
import { openStore } from "../../src/store/open-store.js";
import type { JournalWrite, SealedEffect } from "../../src/store/journal-store.js";
import type { Store } from "../../src/store/store.js";
import type { Backend } from "../support/backends.js";
import { owner } from "./lease-store.contract.js";

const SCOPE = "runtime:rt-1";

export function effect(over: Partial<EffectContent> = {}): SealedEffect {
  return sealEffect({
    runId: "run-1",
    key: "invoice:1:send",
    ordinal: 0,
    provider: "pay",
    state: EffectState.PLANNED,
    prevState: null,
    seq: 1,
    attempt: 0,
    token: 1,
    request: '{"amount":5}',
    requestId: null,
    result: null,
    context: null,
    reviewReason: null,
    ...over,
  });
}

export function runtimeWrite(over: Partial<RuntimeWrite> = {}): RuntimeWrite {
  return {
    runtimeId: "rt-1",
    scope: SCOPE,
    state: "RUNNING",
    version: 1,
    incarnation: "r-a",
    token: 1,
    host: "h",
    pid: 1,
    maintenanceId: null,
    acceptingWork: true,
    activeRuns: 0,
    startedAt: null,
    deadlineAt: null,
    policy: DEFAULT_POLICY,
    note: null,
    reviewReason: null,
    ...over,
  };
}

/** The JournalStore contract: every backend passes exactly these (tests/contract/*.test.ts). */
export async function defineJournalStoreContract(backend: Backend): Promise<void> {
  const skip = await backend.skip();

  describe(`JournalStore contract: ${backend.name}`, { skip }, () => {
    async function withStore(tag: string, fn: (store: Store, url: string) => Promise<void>) {
      const loc = backend.prepare(tag);
      const store = await openStore(loc.url);
      try {
        await fn(store, loc.url);
      } finally {
        await store.close();
        await loc.cleanup();
      }
    }
    const acquire = async (store: Store, runId = "r-a", ttlMs = 10_000) => {
      const r = await store.leases.acquire({
        scope: SCOPE,
        ttlMs,
        owner: owner(runId),
        ticket: null,
      });
      assert.ok(r.ok, "acquired");
      return r.lease.token;
    };
    const createRun = (token: number, runId = "run-1"): JournalWrite => ({
      kind: "create_run",
      token,
      run: { runId, runtimeId: "rt-1", scope: SCOPE, checkpoint: null },
    });
    const plan = (
      token: number,
      over: Partial<EffectContent> = {},
      expectedSeq = 0,
    ): JournalWrite => ({
      kind: "effect",
      token,
      runId: "run-1",
      expectedSeq,
      seq: expectedSeq + 1,
      from: null,
      effect: effect({ token, seq: expectedSeq + 1, ...over }),
    });
    const apply1 = async (store: Store, w: JournalWrite) => (await store.journal.apply([w]))[0]!;

    test("a run and its effect go PLANNED -> DISPATCHED -> ACKNOWLEDGED -> OBSERVED, one sequence step each", () =>
      withStore("four", async (store) => {
        const token = await acquire(store);
        assert.ok((await apply1(store, createRun(token))).ok);
        let cur = effect({ token });
        assert.ok((await apply1(store, plan(token))).ok);
        const steps: [EffectState, Partial<EffectContent>][] = [
          [EffectState.DISPATCHED, { attempt: 1 }],
          [EffectState.ACKNOWLEDGED, { requestId: "req-9" }],
          [EffectState.OBSERVED, { result: '{"paid":true}' }],
        ];
        let seq = 1;
        for (const [to, patch] of steps) {
          const content = contentOf(cur);
          const next = sealEffect({
            ...content,
            ...patch,
            state: to,
            prevState: cur.state,
            seq: seq + 1,
          });
          const r = await apply1(store, {
            kind: "effect",
            token,
            runId: "run-1",
            expectedSeq: seq,
            seq: seq + 1,
            from: cur.state,
            effect: next,
          });
          assert.ok(r.ok, `${cur.state} -> ${to}`);
          cur = next;
          seq++;
        }
        const snap = (await store.journal.getRun("run-1"))!;
        assert.equal(snap.run.seq, 4);
        assert.equal(snap.run.state, "active");
        assert.equal(snap.effects.length, 1);
        assert.deepEqual(await store.journal.stateCounts(), {
          runs: { active: 1 },
          effects: { OBSERVED: 1 },
        });
        const e = snap.effects[0]!;
        assert.deepEqual(
          [e.state, e.prevState, e.seq, e.attempt, e.requestId, e.result, e.checksum],
          [
            EffectState.OBSERVED,
            EffectState.ACKNOWLEDGED,
            4,
            1,
            "req-9",
            '{"paid":true}',
            cur.checksum,
          ],
        );
        assert.equal(e.request, '{"amount":5}', "JSON is kept as the exact text written");
      }));

    test("a key planned twice in one run is refused and changes nothing", () =>
      withStore("dup", async (store) => {
        const token = await acquire(store);
        await apply1(store, createRun(token));
        assert.ok((await apply1(store, plan(token))).ok);
        const again = await apply1(store, plan(token, { request: '{"amount":6}' }, 1));
        assert.ok(!again.ok && again.reason === "duplicate");
        const snap = (await store.journal.getRun("run-1"))!;
        assert.equal(snap.run.seq, 1);
        assert.equal(snap.effects[0]!.request, '{"amount":5}');
        const dupRun = await apply1(store, createRun(token));
        assert.ok(!dupRun.ok && dupRun.reason === "duplicate");
      }));

    test("a transition from the wrong state or at a stale sequence is a conflict and changes nothing", () =>
      withStore("cas", async (store) => {
        const token = await acquire(store);
        await apply1(store, createRun(token));
        await apply1(store, plan(token));
        const d = effect({
          token,
          state: EffectState.DISPATCHED,
          prevState: EffectState.PLANNED,
          seq: 2,
          attempt: 1,
        });
        const wrongFrom = await apply1(store, {
          kind: "effect",
          token,
          runId: "run-1",
          expectedSeq: 1,
          seq: 2,
          from: EffectState.DISPATCHED,
          effect: d,
        });
        assert.ok(!wrongFrom.ok && wrongFrom.reason === "conflict");
        const staleSeq = await apply1(store, {
          kind: "effect",
          token,
          runId: "run-1",
          expectedSeq: 0,
          seq: 1,
          from: EffectState.PLANNED,
          effect: d,
        });
        assert.ok(!staleSeq.ok && staleSeq.reason === "conflict");
        const missing = await apply1(store, {
          kind: "effect",
          token,
          runId: "nope",
          expectedSeq: 0,
          seq: 1,
          from: EffectState.PLANNED,
          effect: d,
        });
        assert.ok(!missing.ok && missing.reason === "missing");
        const snap = (await store.journal.getRun("run-1"))!;
        assert.equal(snap.run.seq, 1);
        assert.equal(snap.effects[0]!.state, EffectState.PLANNED);
      }));

    test("a zombie (its lease released and taken by another holder) cannot write a checkpoint (I3)", () =>
      withStore("zombie", async (store) => {
        const old = await acquire(store, "r-a");
        await apply1(store, createRun(old));
        await apply1(store, plan(old));
        assert.ok(
          (
            await store.leases.release({
              scope: SCOPE,
              token: old,
              runId: "r-a",
              host: "h",
              pid: 1,
              reason: "x",
            })
          ).ok,
        );
        const fresh = await acquire(store, "r-b");
        assert.equal(fresh, old + 1);
        const d = effect({
          token: old,
          state: EffectState.DISPATCHED,
          prevState: EffectState.PLANNED,
          seq: 2,
          attempt: 1,
        });
        const late = await apply1(store, {
          kind: "effect",
          token: old,
          runId: "run-1",
          expectedSeq: 1,
          seq: 2,
          from: EffectState.PLANNED,
          effect: d,
        });
        assert.ok(!late.ok && late.reason === "token_mismatch" && late.current?.token === fresh);
        const lateRun = await apply1(store, {
          kind: "run",
          token: old,
          runId: "run-1",
          expectedSeq: 1,
          seq: 2,
          state: "completed",
          checkpoint: '"x"',
          reviewReason: null,
        });
        assert.ok(!lateRun.ok && lateRun.reason === "token_mismatch");
        const snap = (await store.journal.getRun("run-1"))!;
        assert.equal(snap.run.seq, 1);
        assert.equal(snap.run.state, "active");
        assert.equal(snap.run.checkpoint, null);
        assert.equal(snap.effects[0]!.state, EffectState.PLANNED);
        const ev = await store.events.list({ scope: SCOPE });
        assert.ok(
          ev.some(
            (e) =>
              e.kind === EventKind.FencedWriteRejected && e.token === old && e.runId === "run-1",
          ),
        );
        // The new holder writes under its own token.
        const d2 = effect({
          token: fresh,
          state: EffectState.DISPATCHED,
          prevState: EffectState.PLANNED,
          seq: 2,
          attempt: 1,
        });
        assert.ok(
          (
            await apply1(store, {
              kind: "effect",
              token: fresh,
              runId: "run-1",
              expectedSeq: 1,
              seq: 2,
              from: EffectState.PLANNED,
              effect: d2,
            })
          ).ok,
        );
      }));

    test("a write under an expired lease is refused", () =>
      withStore("expired", async (store) => {
        const token = await acquire(store, "r-a", 150);
        await apply1(store, createRun(token));
        await new Promise((r) => setTimeout(r, 250));
        const r = await apply1(store, plan(token));
        assert.ok(!r.ok && r.reason === "expired");
        assert.equal((await store.journal.getRun("run-1"))!.effects.length, 0);
      }));

    test("one commit carries many runs' writes; each is judged on its own", () =>
      withStore("batch", async (store) => {
        const token = await acquire(store);
        const ids = ["run-a", "run-b", "run-c", "run-d", "run-e"];
        const created = await store.journal.apply(ids.map((id) => createRun(token, id)));
        assert.ok(created.every((r) => r.ok));
        // run-c and run-d already have their effect planned.
        const pre = await store.journal.apply(
          ["run-c", "run-d"].map((id) => ({
            kind: "effect",
            token,
            runId: id,
            expectedSeq: 0,
            seq: 1,
            from: null,
            effect: effect({ runId: id, token }),
          })),
        );
        assert.ok(pre.every((r) => r.ok));
        const dispatched = (id: string) =>
          effect({
            runId: id,
            token,
            state: EffectState.DISPATCHED,
            prevState: EffectState.PLANNED,
            seq: 2,
            attempt: 1,
          });
        const writes: JournalWrite[] = [
          {
            kind: "effect",
            token,
            runId: "run-a",
            expectedSeq: 0,
            seq: 1,
            from: null,
            effect: effect({ runId: "run-a", token }),
          },
          {
            kind: "effect",
            token: token + 7,
            runId: "run-b",
            expectedSeq: 0,
            seq: 1,
            from: null,
            effect: effect({ runId: "run-b", token }),
          },
          {
            kind: "effect",
            token,
            runId: "run-c",
            expectedSeq: 1,
            seq: 2,
            from: null,
            effect: effect({ runId: "run-c", token, seq: 2 }),
          },
          {
            kind: "effect",
            token,
            runId: "run-d",
            expectedSeq: 1,
            seq: 2,
            from: EffectState.ACKNOWLEDGED,
            effect: dispatched("run-d"),
          },
          {
            kind: "run",
            token,
            runId: "run-e",
            expectedSeq: 0,
            seq: 1,
            state: "completed",
            reviewReason: null,
          },
        ];
        const rs = await store.journal.apply(writes);
        assert.deepEqual(
          rs.map((r) => (r.ok ? "ok" : r.reason)),
          ["ok", "token_mismatch", "duplicate", "conflict", "ok"],
        );
        const seqs = await Promise.all(
          ids.map(async (id) => (await store.journal.getRun(id))!.run.seq),
        );
        assert.deepEqual(seqs, [1, 0, 1, 1, 1], "refused writes did not move their run");
        assert.equal((await store.journal.getRun("run-b"))!.effects.length, 0);
        assert.equal((await store.journal.getRun("run-d"))!.effects[0]!.state, EffectState.PLANNED);
      }));

    test("run creations and run writes of many runs in one commit: each judged on its own", () =>
      withStore("batch-runs", async (store) => {
        const token = await acquire(store);
        const created = await store.journal.apply([
          createRun(token, "run-a"),
          createRun(token, "run-b"),
          createRun(token, "run-c"),
        ]);
        assert.ok(created.every((r) => r.ok));
        const again = await store.journal.apply([
          createRun(token, "run-x"),
          createRun(token, "run-a"),
          createRun(token + 7, "run-y"),
        ]);
        assert.deepEqual(
          again.map((r) => (r.ok ? "ok" : r.reason)),
          ["ok", "duplicate", "token_mismatch"],
        );
        assert.equal(await store.journal.getRun("run-y"), null);
        const run = (runId: string, expectedSeq: number, over: Partial<JournalWrite> = {}) =>
          ({
            kind: "run",
            token,
            runId,
            expectedSeq,
            seq: expectedSeq + 1,
            state: "completed",
            reviewReason: null,
            ...over,
          }) as JournalWrite;
        const rs = await store.journal.apply([
          run("run-a", 0, { checkpoint: '{"step":2}' }),
          run("run-b", 5),
          run("run-c", 0, { state: "needs_review", reviewReason: "look" }),
          run("run-x", 0, { token: token + 7 }),
        ]);
        assert.deepEqual(
          rs.map((r) => (r.ok ? "ok" : r.reason)),
          ["ok", "conflict", "ok", "token_mismatch"],
        );
        const got = async (id: string) => {
          const r = (await store.journal.getRun(id))!.run;
          return [r.state, r.seq, r.checkpoint, r.reviewReason];
        };
        assert.deepEqual(await got("run-a"), ["completed", 1, '{"step":2}', null]);
        assert.deepEqual(await got("run-b"), ["active", 0, null, null]);
        assert.deepEqual(await got("run-c"), ["needs_review", 1, null, "look"]);
        assert.deepEqual(await got("run-x"), ["active", 0, null, null]);
      }));

    test("a run write sets state, checkpoint and review reason; listRuns filters", () =>
      withStore("runs", async (store) => {
        const token = await acquire(store);
        await store.journal.apply([createRun(token, "run-a"), createRun(token, "run-b")]);
        const r = await apply1(store, {
          kind: "run",
          token,
          runId: "run-b",
          expectedSeq: 0,
          seq: 1,
          state: "needs_review",
          checkpoint: '{"step":2}',
          reviewReason: "why",
        });
        assert.ok(r.ok);
        const b = (await store.journal.getRun("run-b"))!.run;
        assert.deepEqual(
          [b.state, b.seq, b.checkpoint, b.reviewReason],
          ["needs_review", 1, '{"step":2}', "why"],
        );
        const review = await store.journal.listRuns({ state: "needs_review" });
        assert.deepEqual(
          review.runs.map((x) => x.runId),
          ["run-b"],
        );
        assert.equal((await store.journal.listRuns({ runtimeId: "rt-1" })).runs.length, 2);
        assert.equal((await store.journal.listRuns({ runtimeId: "other" })).runs.length, 0);
        assert.deepEqual((await store.journal.stateCounts()).runs, { active: 1, needs_review: 1 });
      }));

    test("resolve is a compare-and-swap on the run's sequence and the effect's checksum", () =>
      withStore("resolve", async (store) => {
        const token = await acquire(store);
        await apply1(store, createRun(token));
        const planned = effect({ token });
        await apply1(store, plan(token));
        const resolved = effect({
          token,
          state: EffectState.OBSERVED,
          prevState: EffectState.NEEDS_REVIEW,
          seq: 2,
          result: "null",
        });
        const event = {
          kind: EventKind.EffectResolved,
          scope: SCOPE,
          token: null,
          runId: "run-1",
          host: "h",
          pid: 1,
          message: "resolved",
        };
        const req = {
          runId: "run-1",
          key: planned.key,
          expectedSeq: 1,
          seq: 2,
          expectedChecksum: planned.checksum,
          effect: resolved,
          runState: "suspended" as const,
          runReviewReason: null,
          event,
        };
        const stale = await store.journal.resolve({ ...req, expectedChecksum: "0".repeat(64) });
        assert.ok(!stale.ok && stale.reason === "conflict");
        assert.ok((await store.journal.resolve(req)).ok);
        const snap = (await store.journal.getRun("run-1"))!;
        assert.deepEqual(
          [snap.run.state, snap.run.seq, snap.effects[0]!.state],
          ["suspended", 2, EffectState.OBSERVED],
        );
        assert.ok(
          (await store.events.list({ scope: SCOPE })).some(
            (e) => e.kind === EventKind.EffectResolved,
          ),
        );
        const again = await store.journal.resolve(req);
        assert.ok(!again.ok && again.reason === "conflict");
      }));

    test("the runtime record: fenced insert, compare-and-swap updates, zombie refused", () =>
      withStore("runtime", async (store) => {
        const token = await acquire(store);
        assert.ok(
          (
            await store.journal.putRuntime({
              token,
              expectedVersion: null,
              record: runtimeWrite({ token }),
              consumeRequest: null,
            })
          ).ok,
        );
        const twice = await store.journal.putRuntime({
          token,
          expectedVersion: null,
          record: runtimeWrite({ token }),
          consumeRequest: null,
        });
        assert.ok(!twice.ok && twice.reason === "conflict");
        const draining = runtimeWrite({
          token,
          version: 2,
          state: "DRAINING",
          acceptingWork: false,
          maintenanceId: "mw-1",
          deadlineAt: 1_700_000_000_000,
        });
        assert.ok(
          (
            await store.journal.putRuntime({
              token,
              expectedVersion: 1,
              record: draining,
              consumeRequest: null,
            })
          ).ok,
        );
        const stale = await store.journal.putRuntime({
          token,
          expectedVersion: 1,
          record: draining,
          consumeRequest: null,
        });
        assert.ok(!stale.ok && stale.reason === "conflict");
        const zombie = await store.journal.putRuntime({
          token: token + 1,
          expectedVersion: 2,
          record: runtimeWrite({ version: 3 }),
          consumeRequest: null,
        });
        assert.ok(!zombie.ok && zombie.reason === "token_mismatch");
        const { runtime } = await store.journal.getRuntime("rt-1");
        assert.deepEqual(
          [
            runtime!.state,
            runtime!.version,
            runtime!.acceptingWork,
            runtime!.maintenanceId,
            runtime!.deadlineAt,
            runtime!.policy.drainTimeoutMs,
          ],
          ["DRAINING", 2, false, "mw-1", 1_700_000_000_000, DEFAULT_POLICY.drainTimeoutMs],
        );
        assert.ok(runtime!.startedAt > 0 && runtime!.updatedAt >= runtime!.startedAt);
        assert.equal((await store.journal.getRuntime("nope")).runtime, null);
        assert.deepEqual(
          (await store.journal.listRuntimes()).runtimes.map((r) => r.runtimeId),
          ["rt-1"],
        );
      }));

    test("maintenance requests: unknown runtime, accepted once, repeated, busy, consumed, not running", () =>
      withStore("maint", async (store) => {
        const req = { runtimeId: "rt-1", maintenanceId: "mw-1", drainTimeoutMs: 5000, by: "ops@h" };
        const unknown = await store.journal.requestMaintenance(req);
        assert.ok(!unknown.ok && unknown.reason === "unknown_runtime");
        const token = await acquire(store);
        await store.journal.putRuntime({
          token,
          expectedVersion: null,
          record: runtimeWrite({ token }),
          consumeRequest: null,
        });
        const first = await store.journal.requestMaintenance(req);
        assert.ok(
          first.ok &&
            !first.repeated &&
            first.runtime.request?.maintenanceId === "mw-1" &&
            first.runtime.request.drainTimeoutMs === 5000,
        );
        const again = await store.journal.requestMaintenance(req);
        assert.ok(again.ok && again.repeated);
        const other = await store.journal.requestMaintenance({ ...req, maintenanceId: "mw-2" });
        assert.ok(!other.ok && other.reason === "busy");
        const ev = await store.events.list({ scope: SCOPE });
        assert.equal(ev.filter((e) => e.kind === EventKind.MaintenanceRequested).length, 1);
        const draining = runtimeWrite({
          token,
          version: 2,
          state: "DRAINING",
          acceptingWork: false,
          maintenanceId: "mw-1",
        });
        assert.ok(
          (
            await store.journal.putRuntime({
              token,
              expectedVersion: 1,
              record: draining,
              consumeRequest: "mw-1",
            })
          ).ok,
        );
        assert.equal((await store.journal.getRuntime("rt-1")).runtime!.request, null);
        const stopped = runtimeWrite({ token, version: 3, state: "STOPPED", acceptingWork: false });
        await store.journal.putRuntime({
          token,
          expectedVersion: 2,
          record: stopped,
          consumeRequest: null,
        });
        const late = await store.journal.requestMaintenance({ ...req, maintenanceId: "mw-3" });
        assert.ok(!late.ok && late.reason === "not_running");
      }));

    test("purgeRuntime deletes the runtime's record, runs and effects", () =>
      withStore("purge", async (store) => {
        const token = await acquire(store);
        await store.journal.putRuntime({
          token,
          expectedVersion: null,
          record: runtimeWrite({ token }),
          consumeRequest: null,
        });
        await apply1(store, createRun(token));
        await apply1(store, plan(token));
        assert.equal(await store.journal.purgeRuntime("rt-1"), 1);
        assert.equal(await store.journal.getRun("run-1"), null);
        assert.equal((await store.journal.getRuntime("rt-1")).runtime, null);
      }));
  });
}
