import type { ReplicationVerdict } from "../domain/replication.js";
import type { EventInput, EventRecord } from "../domain/event.js";
import type { JournalStore } from "./journal-store.js";
import type { WaveStore } from "./wave-store.js";
import type { LeaseOwner, LeaseRecord, TakeoverRecord } from "../domain/lease.js";
import type { OwnerActivity } from "../domain/probe-verdicts.js";

/**
 * The Store port: atomic domain operations, never a connection or a transaction. Each backend
 * (SQLite, PostgreSQL) implements every method as one atomic step judged on its own clock (I10),
 * and passes the same contract suite (tests/contract).
 */
export interface Store {
  readonly backend: "sqlite" | "postgres";
  /** Where the store is, for messages; never contains a password. */
  readonly location: string;
  /** The side-effect journal and runtime records, on the same connection (journal-store.ts). */
  readonly journal: JournalStore;
  /** Rolling patch waves and their hosts' states, on the same connection (wave-store.ts). */
  readonly waves: WaveStore;
  /** Leases, their fenced state and the wait queue. */
  readonly leases: LeaseStore;
  /** The event log (`quiesce events`) and named markers. */
  readonly events: EventStore;

  /** The store's clock, epoch ms. */
  now(): Promise<number>;

  /**
   * `store prune`: deletes what is finished and older than `olderThanMs` on the store's clock
   * (runs completed or failed, with their effects; completed waves, with their hosts; events),
   * then records the event `event(result)` builds (kept: it is newer), in one commit. Nothing a
   * person still has to look at (runs in review or suspended, halted or stopped waves, leases)
   * is touched.
   */
  prune(olderThanMs: number, event: (r: PruneResult) => EventInput): Promise<PruneResult>;

  info(): Promise<StoreInfo>;
  /** StoreInfo's `replication` alone (the check asks it on every run, /metrics every scrape):
   * undefined where there is none to judge (SQLite). */
  replication(): Promise<ReplicationVerdict | undefined>;
  close(options?: StoreCloseOptions): Promise<void>;
}

export interface StoreCloseOptions {
  /**
   * The process ends right after, with process.exit() (the CLI). SQLite then leaves its
   * write-ahead log for the next process instead of folding it into the database file: see
   * SqliteStore.close. The store must not be used again, and the process must exit.
   */
  processExits?: boolean;
}

/**
 * The lease half of the port: every write fenced by the token in its `WHERE` clause, every
 * expiry judged on the store's clock (I1, I2, I3, I5, I10).
 */
export interface LeaseStore {
  /**
   * Takes the lease if the scope is free (never held, or released) and nobody is queued ahead
   * of `ticket`. Atomic: two callers cannot both succeed (I1). The token is one more than any
   * token the scope ever had (I2). Records a `lease.acquired` event in the same commit.
   */
  acquire(req: AcquireRequest): Promise<AcquireOutcome>;

  /**
   * Extends every listed lease that is still current (same token, not expired) by its TTL from
   * the store's now, in one statement. Returns the scopes that were NOT renewed (usually none,
   * so a tick of 10,000 leases does not ship 10,000 rows back); those leases are lost.
   */
  renew(items: readonly RenewItem[]): Promise<RenewOutcome>;

  /**
   * Releases only if `token` is current and the lease has not expired (a zombie's late release
   * is refused). Records `lease.released` or `lease.release_rejected` in the same commit.
   *
   * Grant at release: when the oldest live ticket in line carries a lease TTL (see `enqueue`),
   * the same commit hands it the lease (token + 1, the ticket's owner, a `lease.acquired`
   * event) and takes the ticket out of line. Its waiter learns this by reading (`peek`'s
   * `granted`), never from a hint: one durable commit per contended handoff, not two.
   */
  release(req: ReleaseRequest): Promise<ReleaseOutcome>;

  /**
   * Takes over a stale lease: a compare-and-swap on the stale token, allowed only while that
   * token is still held and past its expiry on the store clock, and nobody is queued ahead of
   * `ticket` (I5). The new token is one more; the record of whom it replaced and why is stored
   * on the lease and in a `lease.taken_over` event, in the same commit. Of many contenders with
   * the same stale token, exactly one succeeds.
   */
  takeOver(req: TakeoverRequest): Promise<TakeoverOutcome>;

  /** Releases an EXPIRED (or expiry-less) lease by token: the last step of `lock break`, after
   * its incident record is written. A live lease is refused. */
  releaseStale(req: ReleaseRequest): Promise<StaleReleaseOutcome>;

  /**
   * For the run-activity probe: the last event the run wrote while working
   * (HOLDER_ACTIVITY_KINDS), and when it gave the lease `scope`/`token` up itself (its late
   * release was refused: its work had ended).
   */
  ownerActivity(runId: string, scope: string, token: number): Promise<OwnerActivity>;

  /** Sets the wrapped command's pid; fenced by the token like every write under a lease (I3). */
  setChild(
    scope: string,
    token: number,
    childPid: number,
    childPidStart: string | null,
  ): Promise<FenceOutcome>;

  /** Writes a key of the scope's fenced state only if `token` is current and unexpired (I3). */
  putState(scope: string, token: number, key: string, value: string): Promise<FenceOutcome>;
  getState(scope: string): Promise<StateEntry[]>;

  getLease(scope: string): Promise<{ lease: LeaseRecord | null; now: number }>;
  listLeases(): Promise<{ leases: LeaseRecord[]; now: number }>;

  /**
   * listLeases for a reader that keeps the leases between reads (`quiesce serve`): every held
   * lease's scope, in scope order, and the record of each one whose row changed since the
   * version `known` gives for it (none: new to the reader), with its new version. A version
   * changes whenever anything in the row does, whoever changes it (SQLite: the row's text;
   * PostgreSQL: the row version, xmin, and the token). All as of one read, with the store's
   * clock.
   */
  readLeasesSince(known: KnownVersions): Promise<LeaseVersions>;

  /** Logs a `lease.expired` event if the lease with `token` is past expiry and not yet
   * reported; at most once per token, whoever calls. */
  noteExpiry(scope: string, token: number): Promise<void>;

  /**
   * Joins the scope's wait queue (fair handoff for `--wait`); returns the ticket. The ticket
   * carries the whole owner and the TTL the lease is wanted for, so that a release can grant
   * it the lease (see `release`).
   */
  enqueue(
    scope: string,
    waiterTtlMs: number,
    owner: LeaseOwner,
    leaseTtlMs: number,
  ): Promise<number>;
  /** Keeps a ticket alive; a waiter that stops refreshing drops out of line after its TTL. */
  refreshTicket(ticket: number, waiterTtlMs: number): Promise<boolean>;
  /**
   * Leaves the line. A lease granted to the ticket meanwhile (the waiter gave up as the
   * release came) is handed back: released, with a `lease.released` event, so that a grant
   * nobody will use never blocks the scope until its TTL runs out.
   */
  dequeue(ticket: number): Promise<void>;
  /**
   * A read-only look: is the scope free, how many live waiters are ahead of `ticket`, and
   * was the current lease granted to `ticket` (then `holder` is the caller's own lease)?
   */
  peek(scope: string, ticket: number | null): Promise<PeekResult>;

  /**
   * Wake-up hints for a waiter on `scope`: a release, a noted expiry or a waiter leaving the
   * line, by any process (PostgreSQL: NOTIFY sent in the releasing transaction; SQLite: a
   * watched file beside the store, for processes on the same host). A hint is a reason to
   * re-read with `peek`, never a grant; hints can be lost, so the waiter keeps a slow poll.
   * Never fails: where hints cannot be had, the watch is simply never `live`.
   */
  watch(scope: string): ScopeWatch;
}

export interface ScopeWatch {
  /** How many hints have arrived so far; read it before the `peek`, pass it to `next`. */
  readonly hints: number;
  /** How many of them named this waiter's ticket (set with `setTicket`) as first in line at a
   * release: then the lease was most likely just freed for it. */
  readonly named: number;
  /** Whether hints can arrive now (PostgreSQL: the LISTEN connection is up). A waiter whose
   * watch is not live polls at its fast interval. */
  readonly live: boolean;
  /** Resolves at the first hint after `seen` (at once if one came already) or after `ms`;
   * rejects with the signal's reason on abort. */
  next(seen: number, ms: number, signal?: AbortSignal): Promise<void>;
  /** The waiter's ticket, once enqueued: from then on a release that names the ticket first in
   * line wakes only that waiter (see WakeBoard). */
  setTicket(ticket: number): void;
  /**
   * A ticket is being taken (with the acquisition about to be sent): until `setTicket`, a
   * release naming a ticket is held back, and counts then only if it named this one. Without
   * it, a watch with no ticket takes every hint, and the waiter whose acquisition was refused
   * re-read the store for releases that named the waiter ahead of it.
   */
  awaitTicket(): void;
  /** Idempotent. */
  close(): void;
}

/** The event log, written in the same commit as the change it records where there is one. */
export interface EventStore {
  /** Appends an event (store clock). */
  record(event: EventInput): Promise<void>;
  list(filter: EventFilter): Promise<EventRecord[]>;

  /** A named bookmark kept in the store (e.g. when `quiesce check` last ran); null if unset. */
  readMarker(name: string): Promise<string | null>;
  writeMarker(name: string, value: string): Promise<void>;
}

export interface PruneResult {
  runs: number;
  effects: number;
  waves: number;
  events: number;
  /** The cutoff on the store clock, epoch ms. */
  before: number;
}

export interface AcquireRequest {
  scope: string;
  ttlMs: number;
  owner: LeaseOwner;
  /** The caller's place in the wait queue, or null when it does not wait. */
  ticket: number | null;
  /**
   * With no ticket yet: when refused, take a place in line in the same transaction, a ticket
   * valid this long (ms), returned with the refusal. Saves the waiter a round trip (and, on
   * SQLite, a write transaction) at the moment the lease changes hands.
   */
  queueTtlMs?: number;
}

export type AcquireOutcome =
  | { ok: true; lease: LeaseRecord; now: number }
  | {
      ok: false;
      /** `held`: a live lease; `expired`: past expiry, never released; `queued`: free, but
       * waiters are ahead of this caller. */
      reason: "held" | "expired" | "queued";
      holder: LeaseRecord | null;
      now: number;
      waitersAhead: number;
      /** The place in line taken with the refusal (`queueTtlMs`). */
      ticket?: number;
    };

export interface TakeoverRequest {
  scope: string;
  staleToken: number;
  ttlMs: number;
  owner: LeaseOwner;
  ticket: number | null;
  record: TakeoverRecord;
}

export type TakeoverOutcome =
  | { ok: true; lease: LeaseRecord; now: number }
  | { ok: false; reason: "changed" | "queued"; current: LeaseRecord | null; now: number };

export interface RenewItem {
  scope: string;
  token: number;
  ttlMs: number;
}

export interface RenewOutcome {
  refused: ReadonlySet<string>;
}

export interface ReleaseRequest {
  scope: string;
  token: number;
  runId: string | null;
  host: string | null;
  pid: number | null;
  /** Why it is released: "command exited 0", "SIGTERM", ... goes into the event. */
  reason: string;
}

export type ReleaseOutcome =
  | { ok: true }
  | {
      ok: false;
      reason: "not_held" | "token_mismatch" | "expired";
      current: LeaseRecord | null;
      now: number;
    };

export type StaleReleaseOutcome =
  | { ok: true }
  | {
      ok: false;
      reason: "live" | "token_mismatch" | "not_held";
      current: LeaseRecord | null;
      now: number;
    };

export type FenceOutcome =
  | { ok: true }
  | {
      ok: false;
      reason: "not_held" | "token_mismatch" | "expired";
      current: LeaseRecord | null;
      now: number;
    };

export interface StateEntry {
  key: string;
  value: string;
  token: number;
  updatedAt: number;
}

/** What a reader of readLeasesSince has: the version of each lease it keeps. */
export interface KnownVersions {
  get(scope: string): string | undefined;
}

/** What readLeasesSince gives. */
export interface LeaseVersions {
  now: number;
  /** Every held lease's scope, in scope order. */
  scopes: string[];
  /** The held leases whose row is not the version the reader knows, with their new version. */
  changed: Map<string, { version: string; lease: LeaseRecord }>;
}

export interface PeekResult {
  free: boolean;
  holder: LeaseRecord | null;
  waitersAhead: number;
  now: number;
  /** The lease `holder` was granted to the ticket asked about, by a release (grant at release). */
  granted: boolean;
}

export interface EventFilter {
  scope?: string;
  runId?: string;
  /** Only these kinds. */
  kinds?: readonly string[];
  /** Epoch ms on the store clock. */
  since?: number;
  afterId?: number;
  limit?: number;
}

export interface StoreInfo {
  backend: "sqlite" | "postgres";
  location: string;
  schemaVersion: number;
  latestSchemaVersion: number;
  storeId: string;
  settings: Record<string, string>;
  /** PostgreSQL: what a failover to a standby would keep (see domain/replication.ts). */
  replication?: ReplicationVerdict;
}
