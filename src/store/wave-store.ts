import type { EventInput } from "../domain/event.js";
import type { FenceFailure } from "../domain/fencing.js";
import type { LeaseRecord } from "../domain/lease.js";
import type { HostState, WaveState } from "../domain/wave-state.js";
import type { ReleaseRequest } from "./store.js";

/**
 * The waves' port: rolling patch waves and the state of each of their hosts, as atomic domain
 * operations on the store's connection (exposed as `Store.waves`). Every write made by a
 * wave's agent carries its token on the wave's lease (`wave:NAME`) and is refused unless that
 * lease is held with that token and unexpired on the store's clock, checked in the same
 * transaction (I3): a zombie agent's write changes nothing. Each change is also a
 * compare-and-swap on the state the writer last saw.
 */
export interface WaveStore {
  /** Creates a wave and its hosts (all `pending`) in one commit; `exists` if the name is taken. */
  create(def: WaveDefinition, hosts: readonly WaveHostInput[]): Promise<CreateWaveOutcome>;

  getWave(name: string): Promise<{ wave: WaveRecord | null; now: number }>;
  listWaves(): Promise<{ waves: WaveSummary[]; now: number }>;
  /** Every host of the wave, in wave order. */
  listHosts(name: string): Promise<WaveHostRecord[]>;
  /**
   * Every host of the wave, in wave order, with only what `wave status` shows: a 10,000-host
   * wave's status reads 10,000 rows, and on PostgreSQL each column of each row is parsed.
   */
  listHostSummaries(name: string): Promise<WaveHostSummary[]>;

  /**
   * Applies every write in ONE commit (group commit: hosts finishing together share the
   * fsync). Each is judged on its own; the result at index i is write i's.
   */
  apply(writes: readonly WaveWrite[]): Promise<WaveWriteResult[]>;

  /**
   * `wave retry`: puts the listed hosts that are `failed` back to `pending` and deletes their
   * journal runs (the next agent patches them afresh), a completed wave becomes `stopped` (so
   * it can run again), and `event` is recorded: one commit. Refused (`running`) while an agent
   * holds the wave's lease unexpired, checked in the same transaction; the lease row is locked
   * so no agent can take it meanwhile. `hosts` of the result are those that were retried.
   */
  retryHosts(name: string, hosts: readonly string[], event: EventInput): Promise<WaveAdminOutcome>;

  /** `wave delete`: the wave, its hosts and their journal runs, and the agent's runtime
   * record, with `event`, in one commit; refused (`running`) as retryHosts is. */
  deleteWave(name: string, event: EventInput): Promise<WaveAdminOutcome>;
}

export type WaveAdminOutcome =
  | { ok: true; hosts: string[]; now: number }
  | {
      ok: false;
      /** `missing`: no such wave; `running`: its agent holds the wave's lease. */
      reason: "missing" | "running";
      holder: LeaseRecord | null;
      now: number;
    };

export interface WaveDefinition {
  name: string;
  /** As written (`5`, `10%`) and as resolved for this wave's host count. */
  batchSpec: string;
  batchSize: number;
  failureSpec: string;
  maxFailures: number;
  /** The window as written, or null. */
  window: string | null;
  maxPerGroup: number | null;
  event: EventInput;
}

export interface WaveHostInput {
  host: string;
  group: string | null;
}

export type CreateWaveOutcome =
  { ok: true; now: number } | { ok: false; reason: "exists"; now: number };

export interface WaveRecord extends Omit<WaveDefinition, "event"> {
  hostCount: number;
  state: WaveState;
  /** Why it stopped, halted or completed; null while created or running. */
  reason: string | null;
  /** The token of the agent that wrote the wave last (null: never run). */
  token: number | null;
  /** JSON text: the last agent's run settings (commands, concurrency), for `resume` and `status`. */
  settings: string | null;
  createdAt: number;
  /** When the current (or last) agent started on it. */
  startedAt: number | null;
  finishedAt: number | null;
  updatedAt: number;
}

export interface WaveSummary {
  wave: WaveRecord;
  counts: Partial<Record<HostState, number>>;
}

export interface WaveHostRecord {
  wave: string;
  host: string;
  ordinal: number;
  group: string | null;
  state: HostState;
  /** How many times an agent started on it. */
  attempts: number;
  /** Its journal run, once one was created. */
  runId: string | null;
  /** Token of the last write (null: never written since creation). */
  token: number | null;
  reason: string | null;
  /** JSON text: exit codes, the check's and health gate's answers. */
  detail: string | null;
  startedAt: number | null;
  finishedAt: number | null;
  updatedAt: number;
}

/** A host as `wave status` shows it (see listHostSummaries). */
export type WaveHostSummary = Pick<
  WaveHostRecord,
  | "host"
  | "group"
  | "state"
  | "attempts"
  | "runId"
  | "reason"
  | "detail"
  | "startedAt"
  | "finishedAt"
>;

export type WaveWrite =
  | {
      kind: "host";
      wave: string;
      token: number;
      host: string;
      /** The state the writer last saw: the write is a compare-and-swap on it. */
      from: HostState;
      to: HostState;
      reason: string | null;
      detail: string | null;
      /** Set when the run is created; undefined keeps it. */
      runId?: string;
      /** Starting work on it: attempts + 1, started_at = now, finished_at cleared. */
      start?: boolean;
      /** Ending work on it: finished_at = now. */
      finish?: boolean;
      event?: EventInput;
      /**
       * The host's own lease, to release in the same commit if this write goes through (its
       * final state and the release: one commit). Released only if still held with that
       * token and unexpired, with its `lease.released` event and the waiters woken, as
       * LeaseStore.release does; the result says whether it was (`released`).
       */
      release?: ReleaseRequest;
    }
  | {
      kind: "wave";
      wave: string;
      token: number;
      from: WaveState;
      to: WaveState;
      reason: string | null;
      /** JSON text; undefined keeps the stored settings. */
      settings?: string;
      start?: boolean;
      finish?: boolean;
      event?: EventInput;
    };

export type WaveRefusal = FenceFailure | "conflict" | "missing";

export type WaveWriteResult =
  | {
      ok: true;
      now: number;
      /** The write's `release` happened in its commit. False or absent: it did not (the
       * lease was no longer current, or the backend or batch does not combine them); the
       * caller releases the lease as usual. */
      released?: boolean;
    }
  | {
      ok: false;
      /** A fence failure (the wave's lease moved on: a zombie), `conflict` (not in the state
       * the writer saw), `missing` (no such wave or host). */
      reason: WaveRefusal;
      current: LeaseRecord | null;
      now: number;
    };
