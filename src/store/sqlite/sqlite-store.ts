import { formatDuration } from "../../domain/duration.js";
import type Database from "better-sqlite3";
import {
  EventKind,
  HOLDER_ACTIVITY_KINDS,
  type EventInput,
  type EventRecord,
} from "../../domain/event.js";
import type { OwnerActivity } from "../../domain/probe-verdicts.js";
import { fenceFailure } from "../../domain/fencing.js";
import { grantedMessage, handBackReason } from "../../domain/lease-grant.js";
import { acquiredEventDetail, type LeaseOwner, type LeaseRecord } from "../../domain/lease.js";
import {
  eventFromRow,
  leaseFromListRow,
  leaseFromRow,
  ownerFromRow,
  type EventRow,
  type OwnerColumns,
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
  StateEntry,
  Store,
  StoreCloseOptions,
  StoreInfo,
  PruneResult,
  StaleReleaseOutcome,
  TakeoverOutcome,
  TakeoverRequest,
  EventStore,
  LeaseStore,
  ScopeWatch,
} from "../store.js";
import { staleRefusal } from "../rows.js";
import {
  LATEST_SQLITE_SCHEMA,
  openSqlite,
  schemaVersion,
  type SqliteOptions,
} from "./open-sqlite.js";
import { openSqliteReadOnly } from "./open-sqlite-readonly.js";
import { prepareStatements, type Statements } from "./statements.js";
import { SqliteJournal } from "./sqlite-journal.js";
import { eventParams, SqliteTx } from "./sqlite-tx.js";
import { SqliteWaves } from "./sqlite-waves.js";
import { SqliteWakeups } from "./sqlite-wakeups.js";

/**
 * SQLite backend: one file shared by every process on a host. better-sqlite3 is synchronous;
 * each operation is one `BEGIN IMMEDIATE` transaction (one writer at a time, one fsync per
 * commit), so each is atomic across processes. The store clock is the host clock (I10), read
 * inside the transaction so that a wait for the write lock cannot make it stale.
 */
export class SqliteStore implements Store, LeaseStore {
  readonly backend = "sqlite" as const;
  readonly location: string;
  readonly journal: SqliteJournal;
  readonly waves: SqliteWaves;
  /** The lease half of the port: this class implements it directly. */
  readonly leases: LeaseStore = this;
  /** The event log, over the same connection. */
  readonly events: EventStore = {
    record: (e) => this.recordEvent(e),
    list: (f) => this.listEvents(f),
    readMarker: (n) => this.readMarker(n),
    writeMarker: (n, v) => this.writeMarker(n, v),
  };
  private readonly db: Database.Database;
  private readonly q: Statements;
  private readonly tx: SqliteTx;
  private readonly wakeups: SqliteWakeups;
  private closed = false;

  constructor(path: string, options: SqliteOptions = {}) {
    this.location = path;
    this.db = options.readOnly
      ? openSqliteReadOnly(path, options.busyTimeoutMs)
      : openSqlite(path, options);
    this.q = prepareStatements(this.db);
    this.tx = new SqliteTx(this.db, path);
    this.journal = new SqliteJournal(this.db, this.tx);
    this.waves = new SqliteWaves(this.db, this.tx);
    this.wakeups = new SqliteWakeups(path, options.readOnly === true);
  }

  watch(scope: string): ScopeWatch {
    return this.wakeups.watch(scope);
  }

  /**
   * Wakes waiters after a commit that may have let one in (a hint, see SqliteWakeups): the one
   * first in line (a ticket), all of them ("all"), or none (null).
   */
  private async woken<T>(p: Promise<T>, whom: () => number | "all" | null): Promise<T> {
    const r = await p;
    const target = whom();
    if (target !== null) this.wakeups.signal(target);
    return r;
  }

  /** The live ticket first in line for `scope`, if any. */
  private headTicket(scope: string, now: number): number | null {
    return (this.q.headTicket.get(scope, now) as { id: number | null }).id;
  }

  private run<T>(doing: string, fn: () => T): Promise<T> {
    return this.tx.run(doing, fn);
  }

  private write<T>(doing: string, fn: (now: number) => T): Promise<T> {
    return this.tx.write(doing, fn);
  }

  now(): Promise<number> {
    return Promise.resolve(Date.now());
  }

  async acquire(req: AcquireRequest): Promise<AcquireOutcome> {
    const r = await this.acquireTx(req);
    if (r.ok || req.queueTtlMs === undefined || req.ticket !== null) return r;
    // The place in line asked for with the refusal, in a transaction of its own: inside the
    // acquisition's it would commit with a disk flush (synchronous=FULL cannot be lowered inside
    // a transaction) and hold the write lock through it while the lease changes hands.
    const ticket = await this.enqueue(req.scope, req.queueTtlMs, req.owner, req.ttlMs);
    // A release between the refusal and the ticket found nobody in line and woke nobody; the
    // waiter, told "held", would sleep until its safety poll. Told the holder is gone, it reads
    // again at once.
    if (r.reason === "held" && r.holder && !(await this.stillHeld(req.scope, r.holder.token))) {
      return { ok: false, reason: "queued", holder: null, now: r.now, waitersAhead: 0, ticket };
    }
    return { ...r, ticket };
  }

  /** Whether `scope` is still held under `token`. */
  private stillHeld(scope: string, token: number): Promise<boolean> {
    return this.run("read a lease", () => {
      const row = this.q.getLease.get(scope) as LeaseRow | undefined;
      return leaseFromRow(row)?.token === token;
    });
  }

  private acquireTx(req: AcquireRequest): Promise<AcquireOutcome> {
    return this.write("acquire a lease", (now): AcquireOutcome => {
      const row = this.q.getLease.get(req.scope) as LeaseRow | undefined;
      const holder = leaseFromRow(row);
      const waitersAhead = this.countAhead(req.scope, req.ticket, now);
      if (holder) {
        const expired = holder.expiresAt <= now;
        if (expired) this.noteExpiryAt(holder.scope, holder.token, now);
        return { ok: false, reason: expired ? "expired" : "held", holder, now, waitersAhead };
      }
      if (waitersAhead > 0) return { ok: false, reason: "queued", holder: null, now, waitersAhead };
      const token = (row ? Number(row.token) : 0) + 1;
      const o = req.owner;
      this.q.upsertLease.run({
        scope: req.scope,
        token,
        ...ownerParams(req.owner, req.ttlMs, now),
      });
      if (req.ticket !== null) this.q.deleteWaiter.run(req.ticket);
      this.q.purgeWaiters.run(req.scope, now);
      this.insertEvent(now, {
        kind: EventKind.LeaseAcquired,
        scope: req.scope,
        token,
        runId: o.runId,
        host: o.host,
        pid: o.pid,
        message: `acquired with token ${token} for ${formatDuration(req.ttlMs)}`,
        detail: acquiredEventDetail(o, req.ttlMs),
      });
      const lease = leaseFromRow(this.q.getLease.get(req.scope) as LeaseRow);
      if (!lease) throw new Error("lease row vanished inside its own transaction");
      return { ok: true, lease, now };
    });
  }

  private countAhead(scope: string, ticket: number | null, now: number): number {
    const r = this.q.countAhead.get({ scope, now, ticket }) as { n: number };
    return r.n;
  }

  noteExpiry(scope: string, token: number): Promise<void> {
    return this.woken(
      this.write("log an expired lease", (now) => this.noteExpiryAt(scope, token, now)),
      () => "all",
    );
  }

  /** The first acquirer to find a lease past expiry logs it, once per token. */
  private noteExpiryAt(scope: string, token: number, now: number): void {
    const changed = this.q.markExpiryReported.run(scope, token, now).changes;
    if (changed === 0) return;
    const lease = leaseFromRow(this.q.getLease.get(scope) as LeaseRow);
    if (!lease) return;
    this.insertEvent(now, {
      kind: EventKind.LeaseExpired,
      scope,
      token,
      runId: lease.owner.runId,
      host: lease.owner.host,
      pid: lease.owner.pid,
      message: `lease expired ${formatDuration(now - lease.expiresAt)} ago without being released (last heartbeat ${formatDuration(now - lease.heartbeatAt)} ago)`,
      detail: { expiresAt: lease.expiresAt, heartbeatAt: lease.heartbeatAt, owner: lease.owner },
    });
  }

  renew(items: readonly RenewItem[]): Promise<RenewOutcome> {
    if (items.length === 0) return Promise.resolve({ refused: new Set<string>() });
    return this.write("renew leases", (now) => {
      const refused = new Set<string>();
      const renew = this.q.renew;
      for (const i of items) {
        if (renew.run(now, now + i.ttlMs, i.ttlMs, i.scope, i.token, now).changes === 0)
          refused.add(i.scope);
      }
      return { refused };
    });
  }

  takeOver(req: TakeoverRequest): Promise<TakeoverOutcome> {
    return this.write("take over a lease", (now): TakeoverOutcome => {
      const current = leaseFromRow(this.q.getLease.get(req.scope) as LeaseRow | undefined);
      if (!current || current.token !== req.staleToken || current.expiresAt > now) {
        return { ok: false, reason: "changed", current, now };
      }
      if (this.countAhead(req.scope, req.ticket, now) > 0)
        return { ok: false, reason: "queued", current, now };
      const o = req.owner;
      const changed = this.q.takeOver.run({
        scope: req.scope,
        stale_token: req.staleToken,
        ...ownerParams(req.owner, req.ttlMs, now),
        prev_owner: JSON.stringify(req.record.previous),
        evidence: JSON.stringify(req.record),
      }).changes;
      if (changed !== 1) return { ok: false, reason: "changed", current, now };
      if (req.ticket !== null) this.q.deleteWaiter.run(req.ticket);
      this.q.purgeWaiters.run(req.scope, now);
      const token = req.staleToken + 1;
      this.insertEvent(now, {
        kind: EventKind.LeaseTakenOver,
        scope: req.scope,
        token,
        runId: o.runId,
        host: o.host,
        pid: o.pid,
        message: `taken over from token ${req.staleToken} (${req.record.summary})`,
        detail: { ...req.record, ttlMs: req.ttlMs, system: o.system },
      });
      const lease = leaseFromRow(this.q.getLease.get(req.scope) as LeaseRow)!;
      return { ok: true, lease, now };
    });
  }

  releaseStale(req: ReleaseRequest): Promise<StaleReleaseOutcome> {
    const queued = { head: null as number | null };
    return this.woken(this.releaseStaleTx(req, queued), () => queued.head);
  }

  private releaseStaleTx(
    req: ReleaseRequest,
    queued: { head: number | null },
  ): Promise<StaleReleaseOutcome> {
    return this.write("release a stale lease", (now): StaleReleaseOutcome => {
      const changed = this.q.releaseStale.run(req.scope, req.token, now).changes;
      if (changed === 1) {
        queued.head = this.headTicket(req.scope, now);
        this.insertEvent(now, {
          kind: EventKind.LeaseReleased,
          scope: req.scope,
          token: req.token,
          runId: req.runId,
          host: req.host,
          pid: req.pid,
          message: `released: ${req.reason}`,
          detail: { reason: req.reason, stale: true },
        });
        return { ok: true };
      }
      const current = leaseFromRow(this.q.getLease.get(req.scope) as LeaseRow | undefined);
      return { ok: false, reason: staleRefusal(current, req.token), current, now };
    });
  }

  ownerActivity(runId: string, scope: string, token: number): Promise<OwnerActivity> {
    return this.run("read run activity", () => {
      const r = this.q.lastActivity.get(runId, JSON.stringify(HOLDER_ACTIVITY_KINDS)) as
        { at: number; kind: string } | undefined;
      const gaveUp = this.q.relinquished.get(runId, scope, token) as { at: number } | undefined;
      return { last: r ? { at: r.at, what: r.kind } : null, relinquishedAt: gaveUp?.at ?? null };
    });
  }

  release(req: ReleaseRequest): Promise<ReleaseOutcome> {
    // Only a release somebody waits for writes the wake file (the uncontended cycle stays two
    // commits and nothing else). Whether anyone waits is read before the transaction, because
    // it decides how the commit is flushed, which cannot change inside a transaction; when the
    // read cannot say, the commit is flushed.
    const waiting = this.tx.hint(
      "read the wait queue",
      () => this.headTicket(req.scope, Date.now()) !== null,
      true,
    );
    const queued = { head: null as number | null };
    return this.woken(this.releaseTx(req, queued, waiting), () => queued.head);
  }

  /**
   * Nobody waiting: committed to the WAL without the fsync (synchronous=NORMAL), like a place
   * in line. A release survives its process's crash (the WAL is written when this returns), and
   * only a power cut or an OS crash can lose it. Then the lease comes back held by an owner of
   * the previous boot, which the local-process probe proves dead (boot id), and it is taken
   * over once its TTL has run out: what covers every uncontrolled exit (I7). Nothing that
   * followed the release can outlive its loss: a later acquisition's commit fsyncs the WAL,
   * and with it the release written before it, so tokens never go back (I2).
   *
   * Somebody waiting: grant at release, fsynced like any acquisition, since the commit hands
   * the next token to the ticket first in line (its waiter reads it and goes on: a lost grant
   * would give that token out twice). One fsync per handoff instead of a release and then an
   * acquisition. A ticket that joined the line after the read is only woken, not granted.
   */
  private releaseTx(
    req: ReleaseRequest,
    queued: { head: number | null },
    grant: boolean,
  ): Promise<ReleaseOutcome> {
    const commit = (now: number): ReleaseOutcome => {
      const head = grant
        ? (this.q.headWaiter.get(req.scope, now) as WaiterRow | undefined)
        : undefined;
      const grantee = head?.lease_ttl_ms != null ? head : undefined;
      const changed = grantee
        ? this.q.grantLease.run({
            scope: req.scope,
            token: req.token,
            ticket: grantee.id,
            ...ownerParams(ownerFromRow(grantee), grantee.lease_ttl_ms!, now),
          }).changes
        : this.q.release.run(req.scope, req.token, now).changes;
      if (changed === 1) {
        this.insertEvent(now, {
          kind: EventKind.LeaseReleased,
          scope: req.scope,
          token: req.token,
          runId: req.runId,
          host: req.host,
          pid: req.pid,
          message: `released: ${req.reason}`,
          detail: { reason: req.reason },
        });
        if (grantee) this.granted(grantee, req.token, now);
        queued.head = grantee ? grantee.id : this.headTicket(req.scope, now);
        return { ok: true };
      }
      const current = leaseFromRow(this.q.getLease.get(req.scope) as LeaseRow | undefined);
      const reason = fenceFailure(current, req.token, now) ?? "not_held";
      this.insertEvent(now, {
        kind: EventKind.LeaseReleaseRejected,
        scope: req.scope,
        token: req.token,
        runId: req.runId,
        host: req.host,
        pid: req.pid,
        message: `release with token ${req.token} refused (${reason.replace("_", " ")}): ${req.reason}`,
        detail: { reason, currentToken: current?.token ?? null },
      });
      return { ok: false, reason, current, now };
    };
    return grant
      ? this.write("release a lease", commit)
      : this.tx.writeUnsynced("release a lease", commit);
  }

  /** After grantLease: the ticket leaves the line, and the new lease is logged. */
  private granted(w: WaiterRow, releasedToken: number, now: number): void {
    const token = releasedToken + 1;
    const ttlMs = w.lease_ttl_ms!;
    this.q.deleteWaiter.run(w.id);
    this.q.purgeWaiters.run(w.scope, now);
    this.insertEvent(now, {
      kind: EventKind.LeaseAcquired,
      scope: w.scope,
      token,
      runId: w.run_id,
      host: w.host,
      pid: w.pid,
      message: grantedMessage(token, ttlMs, releasedToken),
      detail: {
        system: w.system,
        ttlMs,
        command: w.command,
        note: w.note,
        ticket: w.id,
        grantedBy: releasedToken,
      },
    });
  }

  setChild(
    scope: string,
    token: number,
    childPid: number,
    childPidStart: string | null,
  ): Promise<FenceOutcome> {
    return this.write("record the command's pid", (now) => {
      const changed = this.q.setChild.run({
        scope,
        token,
        now,
        child_pid: childPid,
        child_pid_start: childPidStart,
      }).changes;
      return changed === 1 ? { ok: true } : this.fenceRefused(scope, token, now);
    });
  }

  putState(scope: string, token: number, key: string, value: string): Promise<FenceOutcome> {
    return this.write("write fenced state", (now) => {
      // Same transaction as the check, and SQLite has one writer: nobody can take the lease
      // between the check and the write.
      const current = leaseFromRow(this.q.getLease.get(scope) as LeaseRow | undefined);
      if (fenceFailure(current, token, now) !== null) return this.fenceRefused(scope, token, now);
      this.q.putState.run({ scope, key, value, token, now });
      return { ok: true } as const;
    });
  }

  private fenceRefused(scope: string, token: number, now: number): FenceOutcome {
    const current = leaseFromRow(this.q.getLease.get(scope) as LeaseRow | undefined);
    return { ok: false, reason: fenceFailure(current, token, now) ?? "not_held", current, now };
  }

  getState(scope: string): Promise<StateEntry[]> {
    return this.run("read fenced state", () =>
      (
        this.q.getState.all(scope) as {
          key: string;
          value: string;
          token: number;
          updated_at: number;
        }[]
      ).map((r) => ({ key: r.key, value: r.value, token: r.token, updatedAt: r.updated_at })),
    );
  }

  getLease(scope: string): Promise<{ lease: ReturnType<typeof leaseFromRow>; now: number }> {
    return this.run("read a lease", () => ({
      lease: leaseFromRow(this.q.getLease.get(scope) as LeaseRow | undefined),
      now: Date.now(),
    }));
  }

  listLeases(): Promise<{ leases: LeaseRecord[]; now: number }> {
    return this.run("list leases", () => {
      const rows = this.q.listHeld.all() as string[];
      return {
        leases: rows.map((r) => leaseFromListRow(JSON.parse(r) as LeaseListRow)),
        now: Date.now(),
      };
    });
  }

  readLeasesSince(known: KnownVersions): Promise<LeaseVersions> {
    return this.run("list leases", () => {
      const rows = this.q.listHeldTexts.all() as [string, string][];
      const now = Date.now();
      const scopes = new Array<string>(rows.length);
      const changed: LeaseVersions["changed"] = new Map();
      for (let i = 0; i < rows.length; i++) {
        // The row's text is its version: only a row that changed is parsed again.
        const [scope, text] = rows[i]!;
        scopes[i] = scope;
        if (known.get(scope) !== text)
          changed.set(scope, {
            version: text,
            lease: leaseFromListRow(JSON.parse(text) as LeaseListRow),
          });
      }
      return { now, scopes, changed };
    });
  }

  enqueue(
    scope: string,
    waiterTtlMs: number,
    owner: LeaseOwner,
    leaseTtlMs: number,
  ): Promise<number> {
    // A place in line needs no fsync: a power cut that loses it took its waiter down too. (A
    // grant to it is fsynced, and with it the ticket written before.)
    return this.tx.writeUnsynced("join the wait queue", (now) => {
      const o = ownerParams(owner, leaseTtlMs, now);
      const r = this.q.enqueue.run({
        scope,
        run_id: o.run_id,
        system: o.system,
        host: o.host,
        pid: o.pid,
        pid_start: o.pid_start,
        boot_id: o.boot_id,
        child_pid: o.child_pid,
        child_pid_start: o.child_pid_start,
        command: o.command,
        note: o.note,
        lease_ttl_ms: leaseTtlMs,
        now,
        expires_at: now + waiterTtlMs,
      });
      return Number(r.lastInsertRowid);
    });
  }

  refreshTicket(ticket: number, waiterTtlMs: number): Promise<boolean> {
    return this.tx.writeUnsynced(
      "refresh a wait ticket",
      (now) => this.q.refreshWaiter.run(now + waiterTtlMs, ticket).changes === 1,
    );
  }

  dequeue(ticket: number): Promise<void> {
    // The next in line may be first now: wake it rather than let it wait for its poll.
    return this.woken(
      this.tx.writeUnsynced("leave the wait queue", (now) => {
        if (this.q.deleteWaiter.run(ticket).changes === 1) return;
        // Gone: a release may have granted it the lease, which nobody will use now. Handed back
        // like any release (see releaseTx), so that it does not block the scope for its TTL.
        const g = this.q.grantedTo.get(ticket) as
          | {
              scope: string;
              token: number;
              run_id: string | null;
              host: string | null;
              pid: number | null;
            }
          | undefined;
        if (!g) return;
        this.q.handBack.run(g.scope, g.token);
        const reason = handBackReason(ticket);
        this.insertEvent(now, {
          kind: EventKind.LeaseReleased,
          scope: g.scope,
          token: g.token,
          runId: g.run_id,
          host: g.host,
          pid: g.pid,
          message: `released: ${reason}`,
          detail: { reason, ticket },
        });
      }),
      () => "all",
    );
  }

  peek(scope: string, ticket: number | null): Promise<PeekResult> {
    return this.run("read a lease", () => {
      // One read transaction, so the lease and the queue are seen at the same instant.
      return this.db
        .transaction((): PeekResult => {
          const now = Date.now();
          const row = this.q.getLease.get(scope) as
            (LeaseRow & { granted_ticket: number | null }) | undefined;
          const holder = leaseFromRow(row);
          return {
            free: holder === null,
            holder,
            waitersAhead: this.countAhead(scope, ticket, now),
            now,
            granted: holder !== null && ticket !== null && row!.granted_ticket === ticket,
          };
        })
        .deferred();
    });
  }

  recordEvent(event: EventInput): Promise<void> {
    return this.write("record an event", (now) => this.insertEvent(now, event));
  }

  private insertEvent(now: number, e: EventInput): void {
    this.q.insertEvent.run(eventParams(now, e));
  }

  listEvents(filter: EventFilter): Promise<EventRecord[]> {
    return this.run("list events", () => {
      const rows = this.q.listEvents.all({
        scope: filter.scope ?? null,
        since: filter.since ?? null,
        after: filter.afterId ?? 0,
        limit: filter.limit ?? 1000,
        run_id: filter.runId ?? null,
        kinds: filter.kinds ? JSON.stringify(filter.kinds) : null,
      }) as EventRow[];
      return rows.map(eventFromRow).reverse();
    });
  }

  readMarker(name: string): Promise<string | null> {
    return this.run("read a marker", () => {
      const r = this.q.readMarker.get(`marker:${name}`) as { value: string } | undefined;
      return r?.value ?? null;
    });
  }

  writeMarker(name: string, value: string): Promise<void> {
    return this.write("write a marker", () => {
      this.q.writeMarker.run(`marker:${name}`, value);
    });
  }

  prune(olderThanMs: number, event: (r: PruneResult) => EventInput): Promise<PruneResult> {
    return this.waves.prune(olderThanMs, event);
  }

  replication(): Promise<undefined> {
    return Promise.resolve(undefined); // one file on one host: no standby to fail over to
  }

  info(): Promise<StoreInfo> {
    return this.run("read store info", () => {
      const meta = Object.fromEntries(
        (
          this.db.prepare("SELECT key, value FROM quiesce_meta").all() as {
            key: string;
            value: string;
          }[]
        ).map((r) => [r.key, r.value]),
      );
      return {
        backend: this.backend,
        location: this.location,
        schemaVersion: schemaVersion(this.db, this.location),
        latestSchemaVersion: LATEST_SQLITE_SCHEMA,
        storeId: meta.store_id ?? "",
        settings: {
          journal_mode: String(this.db.pragma("journal_mode", { simple: true })),
          synchronous:
            ["OFF", "NORMAL", "FULL", "EXTRA"][
              Number(this.db.pragma("synchronous", { simple: true }))
            ] ?? "?",
          busy_timeout_ms: String(this.db.pragma("busy_timeout", { simple: true })),
          ...(this.db.readonly ? { access: "read-only" } : {}),
        },
      };
    });
  }

  close(options: StoreCloseOptions = {}): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.wakeups.close();
      // The last connection to close folds the write-ahead log into the database file (a
      // checkpoint, with an fsync) and deletes it; the next process then creates it again and
      // pays two more fsyncs (the new log's header, its directory): some 2 ms of a `quiesce run`
      // (bench/startup). A process about to exit leaves the connection open instead:
      // process.exit() runs no cleanup hooks, so nothing is folded, and the log stays for the
      // next opener as after a crash. Every commit in it is as durable as it was; the log stays
      // bounded (SQLite's automatic checkpoint at 1,000 pages runs on commits).
      if (options.processExits !== true) this.db.close();
    }
    return Promise.resolve();
  }
}

/** A place in line, as read back (see the migration that added grants). */
interface WaiterRow extends OwnerColumns {
  id: number;
  scope: string;
  /** Null: a ticket taken before grants existed, never granted. */
  lease_ttl_ms: number | null;
}

/** The owner and timing columns an acquisition or a takeover writes. */
function ownerParams(o: LeaseOwner, ttlMs: number, now: number) {
  return {
    run_id: o.runId,
    system: o.system,
    host: o.host,
    pid: o.pid,
    pid_start: o.pidStart,
    boot_id: o.bootId,
    child_pid: o.childPid,
    child_pid_start: o.childPidStart,
    command: o.command,
    note: o.note,
    ttl_ms: ttlMs,
    now,
    expires_at: now + ttlMs,
  };
}
