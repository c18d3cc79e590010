import { formatDuration } from "../../domain/duration.js";
import { judgeReplication, type ReplicationVerdict } from "../../domain/replication.js";
import type pg from "pg";
import {
  EventKind,
  HOLDER_ACTIVITY_KINDS,
  type EventInput,
  type EventRecord,
} from "../../domain/event.js";
import type { OwnerActivity } from "../../domain/probe-verdicts.js";
import { fenceFailure } from "../../domain/fencing.js";
import { handBackReason } from "../../domain/lease-grant.js";
import { acquiredEventDetail, type LeaseOwner, type LeaseRecord } from "../../domain/lease.js";
import {
  eventFromRow,
  LEASE_LIST_COLUMNS,
  leaseFromListRow,
  leaseFromRow,
  staleRefusal,
  type EventRow,
  type LeaseListRow,
  type LeaseRow,
} from "../rows.js";
import type {
  AcquireOutcome,
  AcquireRequest,
  EventFilter,
  FenceOutcome,
  KnownVersions,
  LeaseVersions,
  PeekResult,
  ReleaseOutcome,
  ReleaseRequest,
  RenewItem,
  RenewOutcome,
  StaleReleaseOutcome,
  StateEntry,
  Store,
  StoreInfo,
  PruneResult,
  TakeoverOutcome,
  TakeoverRequest,
  EventStore,
  LeaseStore,
  ScopeWatch,
} from "../store.js";
import { clientConfig, createPool, parsePgUrl, pgError, type PgTarget } from "./pg-connection.js";
import { acquisitions, type AcquireParams } from "./pg-acquisitions.js";
import { childPids } from "./pg-child-pids.js";
import { readLeasesSince } from "./pg-lease-versions.js";
import { PgWakeups } from "./pg-wakeups.js";
import { checkReadable, LATEST_PG_SCHEMA, migratePg, readVersion } from "./pg-migrate.js";
import * as sql from "./pg-statements.js";
import { PgJournal } from "./pg-journal.js";
import { PgWaves } from "./pg-waves.js";
import { eventValues, inTransaction, prepareNamed, readArrays, readRows } from "./pg-tx.js";
import { pgPrune } from "./pg-wave-admin.js";

type PeekRow = LeaseRow & {
  now: number;
  ahead: number;
  expiry_reported: boolean | null;
  granted?: boolean;
};
type AcquireRow = PeekRow & { won: boolean; ticket: string | null };

/**
 * PostgreSQL backend: one database shared by agents on many hosts. Each operation is a single
 * statement (data-modifying CTEs), so it is atomic without holding a client across awaits, and
 * its time is the server's clock.
 */
export class PgStore implements Store, LeaseStore {
  readonly backend = "postgres" as const;
  readonly location: string;
  readonly journal: PgJournal;
  readonly waves: PgWaves;
  /** The lease half of the port: this class implements it directly. */
  readonly leases: LeaseStore = this;
  /** The event log, over the same connection. */
  readonly events: EventStore = {
    record: (e) => this.recordEvent(e),
    list: (f) => this.listEvents(f),
    readMarker: (n) => this.readMarker(n),
    writeMarker: (n, v) => this.writeMarker(n, v),
  };
  private readonly pool: pg.Pool;
  private readonly target: PgTarget;
  private readonly wakeups: PgWakeups;
  private readonly children = childPids(
    (doing, text, params) => this.q(doing, text, params),
    (scope, token) => this.refusal(scope, token),
  );
  private readonly acquiring = acquisitions<AcquireRow>((doing, text, params) =>
    this.q(doing, text, params),
  );
  private closed = false;

  private constructor(target: PgTarget) {
    this.target = target;
    this.location = target.display;
    this.pool = createPool(target);
    this.journal = new PgJournal(this.pool, target.display);
    this.wakeups = new PgWakeups(target, clientConfig(target));
    this.waves = new PgWaves(this.pool, target.display, this.wakeups.channel);
  }

  watch(scope: string): ScopeWatch {
    return this.wakeups.watch(scope);
  }

  /** The channel releases notify on (tests and the bench listen to it). */
  get wakeChannel(): string {
    return this.wakeups.channel;
  }

  /** `readOnly`: the schema must exist and be current; nothing is created or migrated. */
  static async open(url: string, options: { readOnly?: boolean } = {}): Promise<PgStore> {
    const store = new PgStore(parsePgUrl(url));
    try {
      if (options.readOnly) await checkReadable(store.pool, store.location);
      else await migratePg(store.pool, store.target.schema, store.location);
      return store;
    } catch (e) {
      await store.close();
      throw pgError(e, store.location, "open");
    }
  }

  private q<R extends pg.QueryResultRow>(
    doing: string,
    text: string,
    params: unknown[] = [],
  ): Promise<R[]> {
    return readRows<R>(this.pool, this.location, doing, text, params);
  }

  async now(): Promise<number> {
    const [r] = await this.q<{ now: number }>("read the clock", sql.NOW);
    return r!.now;
  }

  async acquire(req: AcquireRequest): Promise<AcquireOutcome> {
    const params: AcquireParams = [
      req.scope,
      req.ticket,
      ...ownerArgs(req.owner),
      req.ttlMs,
      acquisitionDetail(req.owner, req.ttlMs),
      formatDuration(req.ttlMs),
      req.ticket === null ? (req.queueTtlMs ?? null) : null,
    ];
    const row = await this.acquiring.submit(params);
    let p: PeekRow = row;
    if (row.won) return { ok: true, lease: leaseFromRow(p)!, now: p.now };
    // A place in line, when asked for; `waitersAhead` counts those ahead of it.
    const queued = row.ticket === null ? {} : { ticket: Number(row.ticket) };
    // Refused, yet the statement's snapshot shows the scope free with nobody ahead: another
    // acquisition committed after the snapshot was taken (the conflict check sees it, the
    // snapshot does not). Read again to name the holder.
    if (!p.held && p.ahead === 0) {
      p = await this.peekRow(req.scope, row.ticket === null ? req.ticket : Number(row.ticket));
    }
    const holder = leaseFromRow(p);
    if (!holder) {
      return {
        ok: false,
        reason: "queued",
        holder: null,
        now: p.now,
        waitersAhead: p.ahead,
        ...queued,
      };
    }
    const expired = holder.expiresAt <= p.now;
    if (expired && !p.expiry_reported)
      await this.q("log an expired lease", sql.NOTE_EXPIRY, [
        holder.scope,
        holder.token,
        this.wakeups.channel,
      ]);
    return {
      ok: false,
      reason: expired ? "expired" : "held",
      holder,
      now: p.now,
      waitersAhead: p.ahead,
      ...queued,
    };
  }

  async noteExpiry(scope: string, token: number): Promise<void> {
    await this.q("log an expired lease", sql.NOTE_EXPIRY, [scope, token, this.wakeups.channel]);
  }

  private async peekRow(scope: string, ticket: number | null): Promise<PeekRow> {
    const [row] = await this.q<PeekRow>("read a lease", sql.PEEK, [scope, ticket]);
    return row!;
  }

  async peek(scope: string, ticket: number | null): Promise<PeekResult> {
    const p = await this.peekRow(scope, ticket);
    const holder = leaseFromRow(p);
    return {
      free: holder === null,
      holder,
      waitersAhead: p.ahead,
      now: p.now,
      granted: p.granted === true,
    };
  }

  async renew(items: readonly RenewItem[]): Promise<RenewOutcome> {
    if (items.length === 0) return { refused: new Set() };
    const scopes: string[] = [];
    const tokens: number[] = [];
    const ttls: number[] = [];
    for (const i of items) {
      scopes.push(i.scope);
      tokens.push(i.token);
      ttls.push(i.ttlMs);
    }
    const rows = await this.q<{ scope: string }>("renew leases", sql.RENEW, [scopes, tokens, ttls]);
    return { refused: new Set(rows.map((r) => r.scope)) };
  }

  async takeOver(req: TakeoverRequest): Promise<TakeoverOutcome> {
    const o = req.owner;
    const rows = await this.q<LeaseRow & { now: number }>("take over a lease", sql.TAKE_OVER, [
      req.scope,
      req.ticket,
      ...ownerArgs(o),
      req.ttlMs,
      req.staleToken,
      JSON.stringify(req.record.previous),
      JSON.stringify(req.record),
      `taken over from token ${req.staleToken} (${req.record.summary})`,
    ]);
    const won = rows[0];
    if (won) return { ok: true, lease: leaseFromRow(won)!, now: won.now };
    const p = await this.peekRow(req.scope, req.ticket);
    const current = leaseFromRow(p);
    const stillStale =
      current !== null && current.token === req.staleToken && current.expiresAt <= p.now;
    return {
      ok: false,
      reason: stillStale && p.ahead > 0 ? "queued" : "changed",
      current,
      now: p.now,
    };
  }

  async releaseStale(req: ReleaseRequest): Promise<StaleReleaseOutcome> {
    const [r] = await this.q<{ n: number }>("release a stale lease", sql.RELEASE_STALE, [
      req.scope,
      req.token,
      req.runId,
      req.host,
      req.pid,
      req.reason,
      this.wakeups.channel,
    ]);
    if (r!.n === 1) return { ok: true };
    const p = await this.peekRow(req.scope, null);
    const current = leaseFromRow(p);
    return { ok: false, reason: staleRefusal(current, req.token), current, now: p.now };
  }

  async ownerActivity(runId: string, scope: string, token: number): Promise<OwnerActivity> {
    const [r] = await this.q<{
      at: number | null;
      kind: string | null;
      relinquished_at: number | null;
    }>("read run activity", sql.OWNER_ACTIVITY, [runId, HOLDER_ACTIVITY_KINDS, scope, token]);
    return {
      last: r?.at != null && r.kind != null ? { at: r.at, what: r.kind } : null,
      relinquishedAt: r?.relinquished_at ?? null,
    };
  }

  async release(req: ReleaseRequest): Promise<ReleaseOutcome> {
    const [r] = await this.q<{ n: number }>("release a lease", sql.RELEASE, [
      req.scope,
      req.token,
      req.runId,
      req.host,
      req.pid,
      req.reason,
      this.wakeups.channel,
    ]);
    if (r!.n === 1) return { ok: true };
    const refused = await this.refusal(req.scope, req.token);
    await this.recordEvent({
      kind: EventKind.LeaseReleaseRejected,
      scope: req.scope,
      token: req.token,
      runId: req.runId,
      host: req.host,
      pid: req.pid,
      message: `release with token ${req.token} refused (${refused.reason.replace("_", " ")}): ${req.reason}`,
      detail: { reason: refused.reason, currentToken: refused.current?.token ?? null },
    });
    return refused;
  }

  private async refusal(
    scope: string,
    token: number,
  ): Promise<Extract<FenceOutcome, { ok: false }>> {
    const p = await this.peekRow(scope, null);
    const current = leaseFromRow(p);
    return {
      ok: false,
      reason: fenceFailure(current, token, p.now) ?? "not_held",
      current,
      now: p.now,
    };
  }

  setChild(
    scope: string,
    token: number,
    childPid: number,
    childPidStart: string | null,
  ): Promise<FenceOutcome> {
    return this.children.submit({ scope, token, childPid, childPidStart });
  }

  async putState(scope: string, token: number, key: string, value: string): Promise<FenceOutcome> {
    const rows = await this.q("write fenced state", sql.PUT_STATE, [scope, token, key, value]);
    return rows.length === 1 ? { ok: true } : this.refusal(scope, token);
  }

  async getState(scope: string): Promise<StateEntry[]> {
    const rows = await this.q<{ key: string; value: string; token: number; updated_at: number }>(
      "read fenced state",
      sql.GET_STATE,
      [scope],
    );
    return rows.map((r) => ({
      key: r.key,
      value: r.value,
      token: r.token,
      updatedAt: r.updated_at,
    }));
  }

  async getLease(scope: string): Promise<{ lease: LeaseRecord | null; now: number }> {
    const p = await this.peekRow(scope, null);
    return { lease: leaseFromRow(p), now: p.now };
  }

  async listLeases(): Promise<{ leases: LeaseRecord[]; now: number }> {
    const rows = await readArrays<LeaseListRow>(
      this.pool,
      this.location,
      "list leases",
      sql.LIST_LEASES,
    );
    // The clock is the column after the lease's. Nothing held: the join's one row has no lease.
    const now = (rows[0] as unknown[])[LEASE_LIST_COLUMNS.length] as number;
    const held = rows[0]![0] === null ? [] : rows;
    return { leases: held.map(leaseFromListRow), now };
  }

  readLeasesSince(known: KnownVersions): Promise<LeaseVersions> {
    return readLeasesSince(this.pool, this.location, known);
  }

  async enqueue(
    scope: string,
    waiterTtlMs: number,
    owner: LeaseOwner,
    leaseTtlMs: number,
  ): Promise<number> {
    const [r] = await this.q<{ id: number }>("join the wait queue", sql.ENQUEUE, [
      scope,
      ...ownerArgs(owner),
      leaseTtlMs,
      waiterTtlMs,
      formatDuration(leaseTtlMs),
    ]);
    return Number(r!.id);
  }

  async refreshTicket(ticket: number, waiterTtlMs: number): Promise<boolean> {
    const rows = await this.q("refresh a wait ticket", sql.REFRESH_TICKET, [ticket, waiterTtlMs]);
    return rows.length === 1;
  }

  async dequeue(ticket: number): Promise<void> {
    const [r] = await this.q<{ n: number }>("leave the wait queue", sql.DEQUEUE, [
      ticket,
      this.wakeups.channel,
    ]);
    if (r!.n === 1) return;
    // The ticket was gone: a release may have granted it the lease (or it ran out and was
    // purged). This is a second statement, so that it sees a grant committed while the DELETE
    // waited for that release's lock on the ticket.
    await this.q("hand back a lease granted too late", sql.HAND_BACK, [
      ticket,
      handBackReason(ticket),
      this.wakeups.channel,
    ]);
  }

  async recordEvent(e: EventInput): Promise<void> {
    await this.q("record an event", sql.INSERT_EVENT, eventValues(e));
  }

  async listEvents(filter: EventFilter): Promise<EventRecord[]> {
    const rows = await this.q<EventRow>("list events", sql.LIST_EVENTS, [
      filter.scope ?? null,
      filter.since ?? null,
      filter.afterId ?? 0,
      filter.limit ?? 1000,
      filter.runId ?? null,
      filter.kinds ?? null,
    ]);
    return rows.map(eventFromRow).reverse();
  }

  async readMarker(name: string): Promise<string | null> {
    const [r] = await this.q<{ value: string }>(
      "read a marker",
      "SELECT value FROM quiesce_meta WHERE key = $1",
      [`marker:${name}`],
    );
    return r?.value ?? null;
  }

  async writeMarker(name: string, value: string): Promise<void> {
    await this.q(
      "write a marker",
      "INSERT INTO quiesce_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      [`marker:${name}`, value],
    );
  }

  prune(olderThanMs: number, event: (r: PruneResult) => EventInput): Promise<PruneResult> {
    return inTransaction(this.pool, this.target.display, "prune the store", (q) =>
      pgPrune(q, olderThanMs, event),
    );
  }

  async info(): Promise<StoreInfo> {
    const meta = await this.q<{ key: string; value: string }>(
      "read store info",
      "SELECT key, value FROM quiesce_meta",
    );
    const m = Object.fromEntries(meta.map((r) => [r.key, r.value]));
    const [s] = await this.q<{ server_version: string; tz: string }>(
      "read store info",
      "SELECT current_setting('server_version') AS server_version, current_setting('TimeZone') AS tz",
    );
    const replication = await this.replication();
    return {
      backend: this.backend,
      location: this.location,
      schemaVersion: (await readVersion(this.pool)) ?? 0,
      latestSchemaVersion: LATEST_PG_SCHEMA,
      storeId: m.store_id ?? "",
      settings: {
        schema: this.target.schema,
        server_version: s!.server_version,
        timezone: s!.tz,
        replication: replication.summary,
      },
      replication,
    };
  }

  /** The standbys connected to this server and whether our commits wait for them. */
  async replication(): Promise<ReplicationVerdict> {
    const [c] = await this.q<{ commit: string; names: string }>(
      "read replication settings",
      "SELECT current_setting('synchronous_commit') AS commit, current_setting('synchronous_standby_names') AS names",
    );
    const standbys = await this.q<{ name: string; sync_state: string | null }>(
      "read replication settings",
      "SELECT application_name AS name, sync_state FROM pg_stat_replication ORDER BY application_name",
    );
    return judgeReplication({
      synchronousCommit: c!.commit,
      synchronousStandbyNames: c!.names,
      standbys: standbys.map((r) => ({ name: r.name, syncState: r.sync_state })),
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wakeups.close();
    await this.pool.end();
  }
}

// The lease hot paths run as named prepared statements.
prepareNamed({
  acquire: sql.ACQUIRE,
  acquire_many: sql.ACQUIRE_MANY,
  peek: sql.PEEK,
  renew: sql.RENEW,
  release: sql.RELEASE,
  release_stale: sql.RELEASE_STALE,
  set_child: sql.SET_CHILD,
  set_children: sql.SET_CHILDREN,
  put_state: sql.PUT_STATE,
  note_expiry: sql.NOTE_EXPIRY,
  take_over: sql.TAKE_OVER,
  insert_event: sql.INSERT_EVENT,
  owner_activity: sql.OWNER_ACTIVITY,
  enqueue: sql.ENQUEUE,
  refresh_ticket: sql.REFRESH_TICKET,
  dequeue: sql.DEQUEUE,
  hand_back: sql.HAND_BACK,
  get_state: sql.GET_STATE,
  now: sql.NOW,
});

/** The `lease.acquired` event's detail for ACQUIRE (its $14), as JSON text. */
export function acquisitionDetail(o: LeaseOwner, ttlMs: number): string {
  return JSON.stringify(acquiredEventDetail(o, ttlMs));
}

/** $3..$12 of ACQUIRE and TAKE_OVER: the owner's columns, in table order. */
export function ownerArgs(o: LeaseOwner): unknown[] {
  return [
    o.runId,
    o.system,
    o.host,
    o.pid,
    o.pidStart,
    o.bootId,
    o.childPid,
    o.childPidStart,
    o.command,
    o.note,
  ];
}
