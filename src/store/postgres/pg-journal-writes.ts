import { fenceFailure } from "../../domain/fencing.js";
import { crashPoint } from "../../fault/crash-points.js";
import { fencedEvent } from "../journal-events.js";
import { recordsResult, type JournalResult, type JournalWrite } from "../journal-store.js";
import { leaseFromRow, type LeaseRow } from "../rows.js";
import * as sql from "./pg-journal-statements.js";
import { insertEvent, type Query } from "./pg-tx.js";

type EffectWrite = Extract<JournalWrite, { kind: "effect" }>;
export type DiagnoseRow = LeaseRow & {
  now: number;
  found_run: string | null;
  run_seq: number | null;
  effect_state: string | null;
};

/**
 * How a batch commits: inside one transaction that the caller commits, or each statement by
 * itself (see PgJournal.apply).
 */
export type BatchCommit = "transaction" | "autocommit";

/**
 * A batch of journal writes. When every write is of a distinct run, the writes of each kind
 * that occurs more than once go in one multi-row statement (effects, run creations, run
 * writes: one round trip each); otherwise one statement each. A write that changed nothing is
 * diagnosed (fence, duplicate, conflict, missing) like SQLite's check-then-write would have
 * said.
 */
export async function applyWrites(
  q: Query,
  writes: readonly JournalWrite[],
  commit: BatchCommit = "transaction",
): Promise<JournalResult[]> {
  const recording = writes.some(recordsResult);
  // The drill's kill "before the result commits": with no transaction, before the statement
  // that carries it is sent (nothing of the batch is written yet, as a rollback would leave it).
  if (commit === "autocommit" && recording) crashPoint("journal.checkpoint-write");
  const results: JournalResult[] = new Array<JournalResult>(writes.length);
  const runIds = new Set(writes.map(runOf));
  /** Run id -> the store's time, for the writes of the kinds in `multi` that went through. */
  const done = new Map<string, number>();
  const multi = new Set<JournalWrite["kind"]>();
  if (runIds.size === writes.length) {
    const of = <K extends JournalWrite["kind"]>(k: K) =>
      writes.filter((w): w is Extract<JournalWrite, { kind: K }> => w.kind === k);
    const effects = of("effect");
    const creates = of("create_run");
    const runs = of("run");
    const merge = (kind: JournalWrite["kind"], m: Map<string, number>) => {
      multi.add(kind);
      m.forEach((now, id) => done.set(id, now));
    };
    if (effects.length > 1) merge("effect", await applyEffects(q, effects));
    if (creates.length > 1) merge("create_run", await createRuns(q, creates));
    if (runs.length > 1) merge("run", await writeRuns(q, runs));
  }
  for (let i = 0; i < writes.length; i++) {
    const w = writes[i]!;
    if (multi.has(w.kind)) {
      const now = done.get(runOf(w));
      if (now === undefined) results[i] = await diagnose(q, w);
      else {
        if (w.event) await insertEvent(q, w.event);
        results[i] = { ok: true, now };
      }
    } else results[i] = await applyOne(q, w);
  }
  // After the rows are written and before COMMIT: a kill here must leave the previous
  // record intact (the server rolls back a transaction whose connection died).
  if (
    commit === "transaction" &&
    recording &&
    writes.some((w, i) => results[i]!.ok && recordsResult(w))
  )
    crashPoint("journal.checkpoint-write");
  return results;
}

const runOf = (w: JournalWrite) => (w.kind === "create_run" ? w.run.runId : w.runId);

/**
 * Whether applyWrites makes the batch's writes in a single statement: one write, or writes of
 * one kind, each of another run (one multi-row statement). Refusals are diagnosed afterwards,
 * by reads (and an event for a fenced write).
 */
export function isOneStatement(writes: readonly JournalWrite[]): boolean {
  if (writes.length === 1) return true;
  const kind = writes[0]?.kind;
  return writes.every((w) => w.kind === kind) && new Set(writes.map(runOf)).size === writes.length;
}

/** Every effect write of the batch (distinct runs) in one statement; the runs that went through. */
async function applyEffects(q: Query, ws: EffectWrite[]): Promise<Map<string, number>> {
  const col = <T>(f: (w: EffectWrite) => T) => ws.map(f);
  const rows = await q<{ run_id: string; now: number }>(
    sql.WRITE_EFFECTS,
    [
      col((w) => w.runId),
      col((w) => w.token),
      col((w) => w.expectedSeq),
      col((w) => w.seq),
      col((w) => w.from),
      col((w) => w.effect.key),
      col((w) => w.effect.ordinal),
      col((w) => w.effect.provider),
      col((w) => w.effect.state),
      col((w) => w.effect.prevState),
      col((w) => w.effect.attempt),
      col((w) => w.effect.request),
      col((w) => w.effect.requestId),
      col((w) => w.effect.result),
      col((w) => w.effect.context),
      col((w) => w.effect.reviewReason),
      col((w) => w.effect.checksum),
      col((w) => w.run?.state ?? null),
      col((w) => w.run !== undefined),
      col((w) => w.run?.reviewReason ?? null),
    ],
    "quiesce_journal_write_effects",
  );
  return new Map(rows.map((r) => [r.run_id, r.now]));
}

type CreateWrite = Extract<JournalWrite, { kind: "create_run" }>;
type RunWrite = Extract<JournalWrite, { kind: "run" }>;

/** Every run creation of the batch (distinct runs) in one statement; the runs created. */
async function createRuns(q: Query, ws: CreateWrite[]): Promise<Map<string, number>> {
  const rows = await q<{ run_id: string; now: number }>(
    sql.CREATE_RUNS,
    [
      ws.map((w) => w.run.runId),
      ws.map((w) => w.run.runtimeId),
      ws.map((w) => w.run.scope),
      ws.map((w) => w.token),
      ws.map((w) => w.run.checkpoint),
    ],
    "quiesce_journal_create_runs",
  );
  return new Map(rows.map((r) => [r.run_id, r.now]));
}

/** Every run write of the batch (distinct runs) in one statement; the runs written. */
async function writeRuns(q: Query, ws: RunWrite[]): Promise<Map<string, number>> {
  const rows = await q<{ run_id: string; now: number }>(
    sql.WRITE_RUNS,
    [
      ws.map((w) => w.runId),
      ws.map((w) => w.token),
      ws.map((w) => w.expectedSeq),
      ws.map((w) => w.seq),
      ws.map((w) => w.state),
      ws.map((w) => w.checkpoint !== undefined),
      ws.map((w) => w.checkpoint ?? null),
      ws.map(() => true),
      ws.map((w) => w.reviewReason),
    ],
    "quiesce_journal_write_runs",
  );
  return new Map(rows.map((r) => [r.run_id, r.now]));
}

async function applyOne(q: Query, w: JournalWrite): Promise<JournalResult> {
  let rows: { now: number }[];
  if (w.kind === "create_run") {
    const r = w.run;
    rows = await q(
      sql.CREATE_RUN,
      [r.runId, r.runtimeId, r.scope, w.token, r.checkpoint],
      "quiesce_journal_create_run",
    );
  } else if (w.kind === "effect") {
    const e = w.effect;
    rows = await q(
      sql.WRITE_EFFECT,
      [
        w.runId,
        w.token,
        w.expectedSeq,
        w.seq,
        w.from,
        e.key,
        e.ordinal,
        e.provider,
        e.state,
        e.prevState,
        e.attempt,
        e.request,
        e.requestId,
        e.result,
        e.context,
        e.reviewReason,
        e.checksum,
        w.run?.state ?? null,
        w.run !== undefined,
        w.run?.reviewReason ?? null,
      ],
      "quiesce_journal_write_effect",
    );
  } else {
    rows = await q(
      sql.WRITE_RUN,
      [
        w.runId,
        w.token,
        w.expectedSeq,
        w.seq,
        w.state,
        w.checkpoint !== undefined,
        w.checkpoint ?? null,
        true,
        w.reviewReason,
      ],
      "quiesce_journal_write_run",
    );
  }
  if (rows[0]) {
    if (w.event) await insertEvent(q, w.event);
    return { ok: true, now: rows[0].now };
  }
  return diagnose(q, w);
}

/** The write changed nothing: say why, as SQLite's check-then-write would have. */
async function diagnose(q: Query, w: JournalWrite): Promise<JournalResult> {
  const runId = w.kind === "create_run" ? w.run.runId : w.runId;
  const key = w.kind === "effect" ? w.effect.key : null;
  const scope = w.kind === "create_run" ? w.run.scope : null;
  const [d] = await q<DiagnoseRow>(sql.DIAGNOSE, [runId, key, scope]);
  const now = d!.now;
  const current = leaseFromRow(d!.scope === null ? null : d);
  if (w.kind !== "create_run" && d!.found_run === null)
    return { ok: false, reason: "missing", current, now };
  const fence = fenceFailure(current, w.token, now);
  if (fence !== null) {
    await insertEvent(q, fencedEvent(w, d!.scope ?? scope ?? "", fence));
    return { ok: false, reason: fence, current, now };
  }
  if (w.kind === "create_run") return { ok: false, reason: "duplicate", current, now };
  if (w.kind === "effect" && w.from === null && d!.effect_state !== null)
    return { ok: false, reason: "duplicate", current, now };
  if (w.kind === "effect" && w.from !== null && d!.effect_state === null)
    return { ok: false, reason: "missing", current, now };
  return { ok: false, reason: "conflict", current, now };
}
