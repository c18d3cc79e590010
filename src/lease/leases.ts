import { ErrorCode, QuiesceError } from "../domain/errors.js";
import type { EventRecord } from "../domain/event.js";
import { toMs } from "../domain/duration.js";
import { describeFenceFailure, fenceFailure } from "../domain/fencing.js";
import {
  describeBlockingLease,
  leaseTiming,
  MIN_TTL_MS,
  type LeaseRecord,
} from "../domain/lease.js";
import { validateScope } from "../domain/names.js";
import type { TakeoverDecision, TakeoverPolicy } from "../domain/takeover-policy.js";
import type { AcquireOutcome, EventFilter, Store, StoreCloseOptions } from "../store/store.js";
import { waitForRespected } from "./respect.js";
import { type AlertEmitter, TakeoverProcedure } from "./takeover.js";
import { type AcquireOptions, resolveAcquire, type ResolvedAcquire } from "./acquire-options.js";
import { readClock } from "../process/clock.js";
import type { ClockReading } from "../domain/self-fencing.js";
import { HeartbeatKeeper, type KeeperEvents } from "./heartbeat-keeper.js";
import { EventOutbox } from "./event-outbox.js";
import { recordFenceRefusal } from "./fence-events.js";
import { Lease } from "./lease.js";
import { hostIdentity } from "../process/process-identity.js";
import { retryTransient } from "../store/store-retry.js";
import { TICKET_TTL_MS, waitInQueue, type WaitRefused } from "./wait-queue.js";

export type Refusal = {
  ok: false;
  /** `respected`: another system named in `respect` holds a lease on this host. */
  reason: Extract<AcquireOutcome, { ok: false }>["reason"] | "respected";
  holder: LeaseRecord | null;
  now: number;
  waitersAhead: number;
  message: string;
  /** The takeover decision, when an expired lease was in the way. */
  decision?: TakeoverDecision;
};
export type TryAcquireResult = { ok: true; lease: Lease } | Refusal;

export interface TakeoverConfig {
  /** Attempt takeover of an expired lease automatically in acquire/run (default true). */
  auto?: boolean;
  /** A probe command template (`ssh {host} kill -0 {pid}`); null or absent: none. */
  probe?: string | null;
  probeTimeoutMs?: number;
  /** Presume a remote owner dead after this much silence past expiry; null: never. Default 5m. */
  remoteGraceMs?: number | null;
}

export interface LeasesOptions extends KeeperEvents {
  /** Where undeliverable loss events wait (default: memory, then a spool file per store). */
  outbox?: EventOutbox;
  takeover?: TakeoverConfig;
  alerter?: AlertEmitter;
}

export const DEFAULT_REMOTE_GRACE_MS = 5 * 60_000;
/** How long closing waits for the store to close its connections. */
const STORE_CLOSE_MS = 2000;

/** Waits for `p`, at most `ms`; a rejection counts as done. */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    p.catch(() => undefined),
    new Promise((r) => (timer = setTimeout(r, ms).unref())),
  ]);
  clearTimeout(timer);
}
export const DEFAULT_PROBE_TIMEOUT_MS = 10_000;

/**
 * The library's entry point for leases. One instance per store per process: it owns the
 * heartbeat keeper, so all the leases it hands out are renewed together.
 *
 *     await using lease = await leases.acquire("patch:wave", { ttl: "30s" });
 *     doWork(lease.signal, lease.token);
 */
export class Leases implements AsyncDisposable {
  readonly store: Store;
  private readonly keeper: HeartbeatKeeper;
  private readonly held = new Set<Lease>();
  private readonly keeperEvents: KeeperEvents;
  private readonly takeoverConfig: Required<TakeoverConfig>;
  readonly alerter: AlertEmitter | undefined;
  /** Loss events that could not be written yet (the store may be why the lease was lost). */
  readonly outbox: EventOutbox;

  constructor(store: Store, options: LeasesOptions = {}) {
    this.store = store;
    this.outbox = options.outbox ?? new EventOutbox(store);
    this.keeperEvents = { onRenewError: options.onRenewError };
    this.keeper = new HeartbeatKeeper(store, this.keeperEvents);
    const t = options.takeover ?? {};
    this.takeoverConfig = {
      auto: t.auto ?? true,
      probe: t.probe ?? null,
      probeTimeoutMs: t.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS,
      remoteGraceMs: t.remoteGraceMs === undefined ? DEFAULT_REMOTE_GRACE_MS : t.remoteGraceMs,
    };
    this.alerter = options.alerter;
  }

  private defaultProcedure: TakeoverProcedure | null = null;

  /** The procedure acquisitions use: built once, so its refusal log survives across calls. */
  private defaultTakeover(): TakeoverProcedure {
    return (this.defaultProcedure ??= this.takeoverProcedure());
  }

  /** The takeover procedure with this instance's probes and alerts; policy flags per call. */
  takeoverProcedure(
    overrides: Partial<Pick<TakeoverPolicy, "forceUnknown" | "allowForeign">> = {},
  ): TakeoverProcedure {
    const c = this.takeoverConfig;
    return new TakeoverProcedure(this.store, {
      policy: {
        system: "quiesce",
        remoteGraceMs: c.remoteGraceMs,
        forceUnknown: false,
        allowForeign: false,
        ...overrides,
      },
      probes: { command: c.probe, commandTimeoutMs: c.probeTimeoutMs },
      alerter: this.alerter,
    });
  }

  /** Replaces the keeper's callbacks (e.g. to report renewal errors on a terminal). */
  setKeeperEvents(events: KeeperEvents): void {
    Object.assign(this.keeperEvents, events);
  }

  /** Contention is a result, not an exception: `{ ok: false, reason, holder, message }`. */
  async tryAcquire(scope: string, options: AcquireOptions = {}): Promise<TryAcquireResult> {
    const req = resolveAcquire(scope, options);
    const begin = readClock().mono;
    if (req.respect.length > 0) {
      const blocked = await waitForRespected(this.store, req, options);
      if (blocked) return blocked;
      req.waitMs = Math.max(0, req.waitMs - (readClock().mono - begin));
    }
    const takeover = (options.takeover ?? this.takeoverConfig.auto) ? this.defaultTakeover() : null;
    const attempt = async (
      ticket: number | null,
    ): Promise<
      { lease: LeaseRecord; start: ClockReading } | { decision: TakeoverDecision } | null
    > => {
      const t = await takeover!.attempt({
        scope,
        owner: req.owner,
        ttlMs: req.timing.ttlMs,
        ticket,
      });
      if (t.outcome === "taken") return { lease: t.lease, start: t.start };
      if (t.outcome === "refused") return { decision: t.decision };
      return null;
    };
    // A caller acquiring in a tight loop on the synchronous SQLite driver never lets timers
    // run; if a renewal is overdue, let the keeper have its turn first.
    if (this.keeper.overdue()) await new Promise((r) => setTimeout(r, 0));
    // Waiting: the watch opens before the first attempt, so a release after the refusal is a
    // hint even before the ticket is known, and the refusal can stand for the first read.
    const watch = req.waitMs > 0 ? this.store.leases.watch(scope) : null;
    watch?.awaitTicket();
    const early = watch && { watch, hints: watch.hints, live: watch.live };
    // With --wait, a dropped connection or a restarting server is waited out, not an exit 1.
    let start = readClock();
    let first: AcquireOutcome;
    try {
      first = await retryTransient(
        () => {
          start = readClock(); // the lease's window starts with the attempt that succeeds
          return this.store.leases.acquire({
            scope,
            ttlMs: req.timing.ttlMs,
            owner: req.owner,
            ticket: null,
            // Waiting: a refusal comes with a place in line (one round trip, not two).
            ...(req.waitMs > 0 ? { queueTtlMs: TICKET_TTL_MS } : {}),
          });
        },
        begin + req.waitMs,
        options.signal,
      );
    } catch (e) {
      watch?.close();
      throw e;
    }
    if (first.ok) {
      watch?.close();
      return { ok: true, lease: this.adopt(first.lease, req, start) };
    }
    const ticket = first.ticket ?? null;
    let firstRefusal: WaitRefused = first;
    if (first.reason === "expired" && takeover) {
      let t: Awaited<ReturnType<typeof attempt>>;
      try {
        t = await attempt(ticket); // a takeover that wins takes the ticket out of line
      } catch (e) {
        watch?.close();
        if (ticket !== null) await this.store.leases.dequeue(ticket).catch(() => undefined);
        throw e;
      }
      if (t && "lease" in t) {
        watch?.close();
        return { ok: true, lease: this.adopt(t.lease, req, t.start) };
      }
      if (t) firstRefusal = { ...first, decision: t.decision };
    }
    if (req.waitMs === 0) return refusal(scope, firstRefusal);
    const waited = await waitInQueue(
      this.store,
      req,
      options,
      firstRefusal,
      takeover ? (_h, ticket) => attempt(ticket) : null,
      ticket,
      early,
    );
    if (!waited.ok) return refusal(scope, waited);
    return { ok: true, lease: this.adopt(waited.lease, req, waited.start) };
  }

  /** Like tryAcquire, but throws LEASE_HELD (with the holder in `details`) when refused. */
  async acquire(scope: string, options: AcquireOptions = {}): Promise<Lease> {
    const r = await this.tryAcquire(scope, options);
    if (r.ok) return r.lease;
    throw new QuiesceError(ErrorCode.LEASE_HELD, r.message, {
      details: { scope, reason: r.reason, holder: r.holder, waitersAhead: r.waitersAhead },
    });
  }

  private adopt(
    record: LeaseRecord,
    req: ResolvedAcquire,
    start: ReturnType<typeof readClock>,
  ): Lease {
    const lease = new Lease(this.store, record, req.timing, start, this.outbox);
    if (req.keepAlive) {
      this.keeper.track(lease);
      this.held.add(lease);
      lease.signal.addEventListener("abort", () => this.held.delete(lease), { once: true });
    }
    return lease;
  }

  /** Leases this instance holds and renews. */
  get active(): readonly Lease[] {
    return [...this.held];
  }

  list(): Promise<{ leases: LeaseRecord[]; now: number }> {
    return this.store.leases.listLeases();
  }

  get(scope: string): Promise<{ lease: LeaseRecord | null; now: number }> {
    return this.store.leases.getLease(scope);
  }

  events(filter: EventFilter = {}): Promise<EventRecord[]> {
    return this.store.events.list(filter);
  }

  // --- Leases held across commands (`lock acquire/renew/release`, other systems' scripts):
  // the caller presents the token; the store's fence decides.

  /** Renews a lease by token, for its TTL unless `ttl` is given; LEASE_LOST if not current. */
  async renewByToken(scope: string, token: number, ttl?: string | number): Promise<LeaseRecord> {
    validateScope(scope, "scope");
    const before = await this.store.leases.getLease(scope);
    const ttlMs = ttl === undefined ? (before.lease?.ttlMs ?? 0) : toMs(ttl, "--ttl");
    if (ttl !== undefined) leaseTiming(ttlMs);
    const { refused } = await this.store.leases.renew([
      { scope, token, ttlMs: Math.max(ttlMs, MIN_TTL_MS) },
    ]);
    const after = await this.store.leases.getLease(scope);
    if (refused.has(scope)) {
      const reason = fenceFailure(after.lease, token, after.now) ?? "not_held";
      await recordFenceRefusal(this.store, {
        ...{ scope, token, what: "renewal", reason, current: after.lease },
        ...{ runId: null, pid: null },
      });
      throw lostError(scope, token, after.lease, after.now, reason);
    }

    return after.lease!;
  }

  /** Releases a lease by token; LEASE_LOST if the token is not current or the lease expired. */
  async releaseByToken(
    scope: string,
    token: number,
    reason: string,
    who: { pid?: number | null } = {},
  ): Promise<void> {
    validateScope(scope, "scope");
    const id = hostIdentity();
    const r = await this.store.leases.release({
      scope,
      token,
      runId: null,
      host: id.host,
      pid: who.pid ?? null,
      reason,
    });
    if (!r.ok) throw lostError(scope, token, r.current, r.now, r.reason);
  }

  /** A fenced write by token (I3): LEASE_LOST unless the token is current and unexpired. */
  async putStateByToken(scope: string, token: number, key: string, value: string): Promise<void> {
    validateScope(scope, "scope");
    const r = await this.store.leases.putState(scope, token, key, value);
    if (r.ok) return;
    await recordFenceRefusal(this.store, {
      ...{ scope, token, what: `state write (${key})`, reason: r.reason, current: r.current },
      ...{ runId: null, pid: null },
    });
    throw lostError(scope, token, r.current, r.now, r.reason);
  }

  /**
   * Releases every lease still held (I7), stops the keeper and closes the store. Idempotent.
   * Releases that fail are reported together after the others were tried. `store` is passed to
   * the store's close (the CLI says there that the process exits next).
   */
  async close(reason = "holder shut down", store: StoreCloseOptions = {}): Promise<void> {
    const errors: unknown[] = [];
    for (const l of [...this.held]) {
      await l.release(reason).catch((e: unknown) => errors.push(e));
    }
    this.held.clear();
    // Renewals were failing: the store is unreachable, and waiting for it would only hold the
    // exit past the grace (a partitioned agent must go within it, not after store timeouts).
    const storeDown = this.keeper.failing;
    this.keeper.stop();
    // A loss noticed just before exit (exit 76) must not die with the process: wait a little
    // for the store, then leave what is still unwritten in the spool for the next process.
    await this.outbox.flush(storeDown ? 0 : 2000);
    this.outbox.close();
    // A store cut off by a partition would hold the exit for its query timeouts (15 s on
    // PostgreSQL): there is nothing left to say to it, so stop waiting after a moment.
    await within(this.store.close(store), storeDown ? 200 : STORE_CLOSE_MS);
    if (errors.length > 0) throw errors[0];
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

function lostError(
  scope: string,
  token: number,
  current: LeaseRecord | null,
  now: number,
  reason = fenceFailure(current, token, now) ?? "not_held",
): QuiesceError {
  return new QuiesceError(
    ErrorCode.LEASE_LOST,
    describeFenceFailure(scope, token, reason, current, now),
    {
      details: { scope, token, reason, currentToken: current?.token ?? null },
    },
  );
}

function refusal(scope: string, r: WaitRefused): Refusal {
  let message: string;
  const d = r.decision;
  if (r.holder && d?.action === "refuse" && d.reason !== "not_expired") {
    message = `${describeBlockingLease(r.holder, r.now, { takeoverTried: true })}; takeover refused: ${d.summary}`;
  } else if (r.holder) message = describeBlockingLease(r.holder, r.now);
  else
    message = `${scope} is free but ${r.waitersAhead} waiter(s) are queued ahead; use --wait to take a place in line`;
  return { ...r, message };
}
