import type Database from "better-sqlite3";
import type { EventInput } from "../../domain/event.js";
import { fenceFailure } from "../../domain/fencing.js";
import type { RunState } from "../../domain/journal-record.js";
import { crashPoint } from "../../fault/crash-points.js";
import {
  recordsResult,
  type JournalResult,
  type JournalCounts,
  type JournalStore,
  type JournalWrite,
  type MaintenanceRequestInput,
  type MaintenanceRequestOutcome,
  type ResolveOutcome,
  type ResolveRequest,
  type RunFilter,
  type RunSnapshot,
  type RuntimePut,
  type SealedEffect,
} from "../journal-store.js";
import {
  effectFromRow,
  requestRefusal,
  runFromRow,
  runtimeFromRow,
  type EffectRow,
  type RunRow,
  type RuntimeRow,
} from "../journal-rows.js";
import { fencedEvent, maintenanceEvent } from "../journal-events.js";
import { leaseFromRow, type LeaseRow } from "../rows.js";
import { eventParams, type SqliteTx } from "./sqlite-tx.js";
import { prepareJournalStatements, type JournalStatements } from "./journal-statements.js";

/**
 * The journal on SQLite. Each call is one `BEGIN IMMEDIATE` transaction on the store's
 * connection (synchronous=FULL: a commit is on disk when the call returns), with the store's
 * clock read inside it (I10).
 */
export class SqliteJournal implements JournalStore {
  private readonly q: JournalStatements;
  private readonly tx: SqliteTx;

  constructor(db: Database.Database, tx: SqliteTx) {
    this.q = prepareJournalStatements(db);
    this.tx = tx;
  }

  private read<T>(doing: string, fn: (now: number) => T): Promise<T> {
    return this.tx.read(doing, fn);
  }

  private write<T>(doing: string, fn: (now: number) => T): Promise<T> {
    return this.tx.write(doing, fn);
  }

  apply(writes: readonly JournalWrite[]): Promise<JournalResult[]> {
    if (writes.length === 0) return Promise.resolve([]);
    return this.write("write the journal", (now) => {
      const results = writes.map((w) => this.applyOne(w, now));
      // Inside the transaction, after the rows are written and before COMMIT: a kill here
      // must leave the previous record intact.
      if (writes.some((w, i) => results[i]!.ok && recordsResult(w)))
        crashPoint("journal.checkpoint-write");
      return results;
    });
  }

  private applyOne(w: JournalWrite, now: number): JournalResult {
    if (w.kind !== "create_run" && this.applyFenced(w, now)) {
      if (w.event) this.insertEvent(now, w.event);
      return { ok: true, now };
    }
    return this.checkThenWrite(w, now);
  }

  /**
   * The fast path of a transition: the write is conditional on the fence and the run's
   * sequence (FENCED), so one that goes through reads nothing first. False when it changed
   * nothing; then nothing was written and checkThenWrite says why (in the same transaction).
   */
  private applyFenced(w: Exclude<JournalWrite, { kind: "create_run" }>, now: number): boolean {
    if (w.kind === "run") {
      return (
        this.q.updateRunFenced.run({
          fence_token: w.token,
          expected_seq: w.expectedSeq,
          now,
          run_id: w.runId,
          seq: w.seq,
          token: w.token,
          state: w.state,
          set_checkpoint: w.checkpoint === undefined ? 0 : 1,
          checkpoint: w.checkpoint ?? null,
          set_review: 1,
          review_reason: w.reviewReason,
        }).changes === 1
      );
    }
    // The fence reads the run by the effect's run id: they must be the same run.
    if (w.effect.runId !== w.runId) return false;
    const params = effectParams(w.effect, w.from, now, w);
    const changed =
      w.from === null
        ? this.q.insertEffectFenced.run(params).changes
        : this.q.updateEffectFenced.run(params).changes;
    if (changed !== 1) return false;
    // The fence just saw the run at expectedSeq, and this transaction is the only writer.
    this.updateRun(w.runId, w.expectedSeq, w.seq, w.token, now, w.run?.state ?? null, {
      review: w.run ? w.run.reviewReason : undefined,
    });
    return true;
  }

  /** Reads the run and the lease, then writes: the slow path, which names every refusal. */
  private checkThenWrite(w: JournalWrite, now: number): JournalResult {
    const runRow = this.q.getRun.get(w.kind === "create_run" ? w.run.runId : w.runId) as
      RunRow | undefined;
    const scope = w.kind === "create_run" ? w.run.scope : runRow?.scope;
    if (scope === undefined) return { ok: false, reason: "missing", current: null, now };
    const current = leaseFromRow(this.q.getLease.get(scope) as LeaseRow | undefined);
    const fence = fenceFailure(current, w.token, now);
    if (fence !== null) {
      this.insertEvent(now, fencedEvent(w, scope, fence));
      return { ok: false, reason: fence, current, now };
    }
    const refuse = (reason: "conflict" | "duplicate" | "missing"): JournalResult => ({
      ok: false,
      reason,
      current,
      now,
    });
    if (w.kind === "create_run") {
      if (runRow) return refuse("duplicate");
      this.q.insertRun.run({
        run_id: w.run.runId,
        runtime_id: w.run.runtimeId,
        scope,
        token: w.token,
        checkpoint: w.run.checkpoint,
        now,
      });
    } else {
      if (Number(runRow!.seq) !== w.expectedSeq) return refuse("conflict");
      if (w.kind === "effect") {
        // A conditional write, then a look only if it changed nothing: nothing else has been
        // written for this write yet, so a refusal leaves no trace.
        if (w.from === null) {
          if (this.q.insertEffect.run(effectParams(w.effect, null, now)).changes === 0)
            return refuse("duplicate");
        } else if (this.q.updateEffect.run(effectParams(w.effect, w.from, now)).changes === 0) {
          return refuse(this.q.getEffect.get(w.runId, w.effect.key) ? "conflict" : "missing");
        }
        this.updateRun(w.runId, w.expectedSeq, w.seq, w.token, now, w.run?.state ?? null, {
          review: w.run ? w.run.reviewReason : undefined,
        });
      } else {
        this.updateRun(w.runId, w.expectedSeq, w.seq, w.token, now, w.state, {
          review: w.reviewReason,
          checkpoint: w.checkpoint,
        });
      }
    }
    if (w.event) this.insertEvent(now, w.event);
    return { ok: true, now };
  }

  private updateRun(
    runId: string,
    expectedSeq: number,
    seq: number,
    token: number,
    now: number,
    state: RunState | null,
    set: { review?: string | null; checkpoint?: string | null },
  ): number {
    return this.q.updateRun.run({
      run_id: runId,
      expected_seq: expectedSeq,
      seq,
      token,
      state,
      set_checkpoint: set.checkpoint === undefined ? 0 : 1,
      checkpoint: set.checkpoint ?? null,
      set_review: set.review === undefined ? 0 : 1,
      review_reason: set.review ?? null,
      now,
    }).changes;
  }

  getRun(runId: string): Promise<RunSnapshot | null> {
    return this.read("read a run", (now) => {
      const row = this.q.getRun.get(runId) as RunRow | undefined;
      if (!row) return null;
      const effects = (this.q.getEffects.all(runId) as EffectRow[]).map(effectFromRow);
      return { run: runFromRow(row), effects, now };
    });
  }

  stateCounts(): Promise<JournalCounts> {
    return this.read("count runs and effects", () => {
      const tally = (rows: unknown[]) =>
        Object.fromEntries((rows as { state: string; n: number }[]).map((r) => [r.state, r.n]));
      return { runs: tally(this.q.countRuns.all()), effects: tally(this.q.countEffects.all()) };
    });
  }

  listRuns(filter: RunFilter) {
    return this.read("list runs", (now) => {
      const rows = this.q.listRuns.all({
        state: filter.state ?? null,
        runtime: filter.runtimeId ?? null,
        limit: filter.limit ?? 1000,
      }) as RunRow[];
      return { runs: rows.map(runFromRow), now };
    });
  }

  resolve(req: ResolveRequest): Promise<ResolveOutcome> {
    return this.write("resolve an effect", (now): ResolveOutcome => {
      const run = this.q.getRun.get(req.runId) as RunRow | undefined;
      const effect = this.q.getEffect.get(req.runId, req.key) as EffectRow | undefined;
      if (!run || !effect) return { ok: false, reason: "missing", now };
      if (Number(run.seq) !== req.expectedSeq || effect.checksum !== req.expectedChecksum)
        return { ok: false, reason: "conflict", now };
      this.q.updateEffect.run(effectParams(req.effect, effect.state, now));
      this.updateRun(req.runId, req.expectedSeq, req.seq, Number(run.token), now, req.runState, {
        review: req.runReviewReason,
      });
      this.insertEvent(now, req.event);
      return { ok: true, now };
    });
  }

  getRuntime(runtimeId: string) {
    return this.read("read a runtime", (now) => {
      const row = this.q.getRuntime.get(runtimeId) as RuntimeRow | undefined;
      return { runtime: row ? runtimeFromRow(row) : null, now };
    });
  }

  listRuntimes() {
    return this.read("list runtimes", (now) => ({
      runtimes: (this.q.listRuntimes.all() as RuntimeRow[]).map(runtimeFromRow),
      now,
    }));
  }

  putRuntime(req: RuntimePut): Promise<JournalResult> {
    return this.write("write the runtime record", (now): JournalResult => {
      const r = req.record;
      const current = leaseFromRow(this.q.getLease.get(r.scope) as LeaseRow | undefined);
      const fence = fenceFailure(current, req.token, now);
      if (fence !== null) return { ok: false, reason: fence, current, now };
      const existing = this.q.getRuntime.get(r.runtimeId) as RuntimeRow | undefined;
      const params = {
        runtime_id: r.runtimeId,
        scope: r.scope,
        state: r.state,
        version: r.version,
        incarnation: r.incarnation,
        token: r.token,
        host: r.host,
        pid: r.pid,
        maintenance_id: r.maintenanceId,
        accepting_work: r.acceptingWork ? 1 : 0,
        active_runs: r.activeRuns,
        started_at: r.startedAt,
        deadline_at: r.deadlineAt,
        policy: JSON.stringify(r.policy),
        note: r.note,
        review_reason: r.reviewReason,
        now,
      };
      if (req.expectedVersion === null) {
        if (existing) return { ok: false, reason: "conflict", current, now };
        this.q.insertRuntime.run(params);
      } else {
        const changed = this.q.updateRuntime.run({
          ...params,
          expected_version: req.expectedVersion,
          consume: req.consumeRequest,
        }).changes;
        if (changed !== 1)
          return { ok: false, reason: existing ? "conflict" : "missing", current, now };
      }
      if (req.event) this.insertEvent(now, req.event);
      return { ok: true, now };
    });
  }

  requestMaintenance(req: MaintenanceRequestInput): Promise<MaintenanceRequestOutcome> {
    return this.write("request maintenance", (now): MaintenanceRequestOutcome => {
      const row = this.q.getRuntime.get(req.runtimeId) as RuntimeRow | undefined;
      if (!row) return { ok: false, reason: "unknown_runtime", runtime: null };
      const rt = runtimeFromRow(row);
      const refusal = requestRefusal(rt, req.maintenanceId);
      if (refusal === "repeated") return { ok: true, runtime: rt, repeated: true };
      if (refusal !== null) return { ok: false, reason: refusal, runtime: rt };
      this.q.requestMaintenance.run({
        runtime_id: req.runtimeId,
        id: req.maintenanceId,
        drain_ms: req.drainTimeoutMs,
        now,
        by: req.by,
      });
      this.insertEvent(now, maintenanceEvent(rt, req));
      const after = runtimeFromRow(this.q.getRuntime.get(req.runtimeId) as RuntimeRow);
      return { ok: true, runtime: after, repeated: false };
    });
  }

  purgeRuntime(runtimeId: string): Promise<number> {
    return this.write("delete a runtime's records", () => {
      const n = this.q.deleteRuns.run(runtimeId).changes;
      this.q.deleteRuntime.run(runtimeId);
      return n;
    });
  }

  private insertEvent(now: number, e: EventInput): void {
    this.q.insertEvent.run(eventParams(now, e));
  }
}

/**
 * The named parameters of every effect statement, fenced or not, in one literal: better-sqlite3
 * ignores the names a statement does not use, and building this once per write (not spread
 * into a second object) is a measurable part of a transition's CPU (bench/journal).
 */
function effectParams(
  e: SealedEffect,
  from: string | null,
  now: number,
  fence: { token: number; expectedSeq: number } | null = null,
) {
  return {
    run_id: e.runId,
    key: e.key,
    ordinal: e.ordinal,
    provider: e.provider,
    state: e.state,
    prev_state: e.prevState,
    seq: e.seq,
    attempt: e.attempt,
    token: e.token,
    request: e.request,
    request_id: e.requestId,
    result: e.result,
    context: e.context,
    review_reason: e.reviewReason,
    checksum: e.checksum,
    from,
    fence_token: fence?.token ?? null,
    expected_seq: fence?.expectedSeq ?? null,
    now,
  };
}
