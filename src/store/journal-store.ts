import type { EffectState } from "../domain/effect-state.js";
import type { EventInput } from "../domain/event.js";
import type { FenceFailure } from "../domain/fencing.js";
import type { EffectRecord, RunRecord, RunState } from "../domain/journal-record.js";
import type { LeaseRecord } from "../domain/lease.js";
import type { RuntimeRecord, RuntimeWrite } from "../domain/runtime-record.js";

/**
 * The journal's port: runs, their effects and the runtime records, as atomic domain
 * operations. Every write made under a lease carries the writer's token and is refused unless
 * the lease on the run's (or runtime's) scope is held with that token and unexpired on the
 * store's clock, checked in the same transaction as the write (I3). State changes are
 * compare-and-swaps on the expected previous state and sequence, so a stale writer can never
 * overwrite a newer record. Exposed as `Store.journal`; each backend owns the connection.
 */
export interface JournalStore {
  /**
   * Applies every write in ONE commit (group commit: concurrent runs share the fsync). Each
   * write is judged on its own: the result at index i is write i's. A write that is refused
   * changes nothing; the others still commit.
   */
  apply(writes: readonly JournalWrite[]): Promise<JournalResult[]>;

  getRun(runId: string): Promise<RunSnapshot | null>;
  listRuns(filter: RunFilter): Promise<{ runs: RunRecord[]; now: number }>;
  /** How many runs and effects are in each state (for /metrics: one aggregate, not every row). */
  stateCounts(): Promise<JournalCounts>;

  /** A human's reconciliation of one effect: a compare-and-swap on the run's sequence and the
   * effect's checksum, NOT fenced by the lease (the operator does not hold it). */
  resolve(req: ResolveRequest): Promise<ResolveOutcome>;

  getRuntime(runtimeId: string): Promise<{ runtime: RuntimeRecord | null; now: number }>;
  listRuntimes(): Promise<{ runtimes: RuntimeRecord[]; now: number }>;
  /** Writes the runtime record: fenced by the runtime's lease, a CAS on `expectedVersion`
   * (null: the record must not exist yet). */
  putRuntime(req: RuntimePut): Promise<JournalResult>;
  /** Asks a running runtime to drain (`maintenance start`); the runtime polls for it. */
  requestMaintenance(req: MaintenanceRequestInput): Promise<MaintenanceRequestOutcome>;
  /** Deletes a runtime's record, runs and effects (the drill cleans up after itself). */
  purgeRuntime(runtimeId: string): Promise<number>;
}

/** An effect record as its writer seals it; the store stamps the times. */
export type SealedEffect = Omit<EffectRecord, "createdAt" | "updatedAt">;

export type JournalWrite =
  | {
      kind: "create_run";
      token: number;
      run: Pick<RunRecord, "runId" | "runtimeId" | "scope" | "checkpoint">;
      event?: EventInput;
    }
  | {
      kind: "effect";
      token: number;
      runId: string;
      /** The run's sequence the writer last saw; the write makes it `seq`. */
      expectedSeq: number;
      seq: number;
      /** The effect's state the writer last saw; null: the effect is being planned (inserted). */
      from: EffectState | null;
      effect: SealedEffect;
      /** Also move the run (e.g. to needs_review when the effect is quarantined). */
      run?: { state: RunState; reviewReason: string | null };
      event?: EventInput;
    }
  | {
      kind: "run";
      token: number;
      runId: string;
      expectedSeq: number;
      seq: number;
      state: RunState;
      /** JSON text; undefined keeps the stored checkpoint. */
      checkpoint?: string | null;
      reviewReason: string | null;
      event?: EventInput;
    };

export type JournalRefusal = FenceFailure | "conflict" | "duplicate" | "missing";

export type JournalResult =
  | { ok: true; now: number }
  | {
      ok: false;
      /** A fence failure (the lease moved on: a zombie), `conflict` (the record is not in the
       * expected state or sequence), `duplicate` (the key or run exists), `missing`. */
      reason: JournalRefusal;
      current: LeaseRecord | null;
      now: number;
    };

export interface RunSnapshot {
  run: RunRecord;
  /** In planning order. */
  effects: EffectRecord[];
  now: number;
}

export interface JournalCounts {
  /** Run state -> count; states with no run are absent. */
  runs: Record<string, number>;
  /** Effect state -> count. */
  effects: Record<string, number>;
}

export interface RunFilter {
  state?: RunState;
  runtimeId?: string;
  limit?: number;
}

export interface ResolveRequest {
  runId: string;
  key: string;
  expectedSeq: number;
  seq: number;
  expectedChecksum: string;
  effect: SealedEffect;
  runState: RunState;
  runReviewReason: string | null;
  event: EventInput;
}

export type ResolveOutcome =
  { ok: true; now: number } | { ok: false; reason: "conflict" | "missing"; now: number };

export interface RuntimePut {
  token: number;
  expectedVersion: number | null;
  record: RuntimeWrite;
  /** Clears the pending maintenance request with this id (the runtime acted on it). */
  consumeRequest: string | null;
  event?: EventInput;
}

export interface MaintenanceRequestInput {
  runtimeId: string;
  maintenanceId: string;
  drainTimeoutMs: number | null;
  by: string;
}

export type MaintenanceRequestOutcome =
  | { ok: true; runtime: RuntimeRecord; repeated: boolean }
  | {
      ok: false;
      /** No such runtime; it is not running (stopped, quiesced, in review); or it is already
       * draining (or asked to) for another maintenance. */
      reason: "unknown_runtime" | "not_running" | "busy";
      runtime: RuntimeRecord | null;
    };

/** A write that records an effect's result: the "checkpoint write" the drill kills inside. */
export function recordsResult(w: JournalWrite): boolean {
  return w.kind === "effect" && w.effect.state === "OBSERVED";
}
