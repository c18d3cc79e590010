import { isQuiesceError } from "../domain/errors.js";
import { EventKind } from "../domain/event.js";
import type { Store } from "../store/store.js";
import { readClock } from "./clock.js";
import type { KeeperHooks, Lease } from "./lease.js";

export interface KeeperEvents {
  /** A renewal attempt failed (store error); the keeper retries until each lease's deadline. */
  onRenewError?(error: unknown, leases: readonly Lease[]): void;
}

/**
 * Renews every lease a process holds, in one store statement per tick (STYLE: self-rescheduling
 * setTimeout, so renewals never overlap; timers unref'd so they never keep a process alive).
 *
 * Two timers:
 *  - the renewal timer wakes at the earliest due renewal and renews every lease due within
 *    half a heartbeat, so leases acquired at different moments fall into one batch;
 *  - the deadline timer wakes at the earliest local deadline and marks every lease past it as
 *    lost (I4). It does not wait for a renewal in flight: a hung store cannot delay it.
 */
export class HeartbeatKeeper implements KeeperHooks {
  private readonly leases = new Set<Lease>();
  private renewTimer: NodeJS.Timeout | null = null;
  private deadlineTimer: NodeJS.Timeout | null = null;
  private inFlight = false;
  private stopped = false;
  /** Consecutive failed attempts, and when the first of them started (for the event). */
  private failures = 0;
  private failingSince = 0;
  /** While failing: when to try again (monotonic ms). */
  private retryAt = 0;

  constructor(
    private readonly store: Store,
    private readonly events: KeeperEvents = {},
  ) {}

  get size(): number {
    return this.leases.size;
  }

  track(lease: Lease): void {
    if (this.stopped) throw new Error("the heartbeat keeper was stopped");
    this.leases.add(lease);
    lease.attachKeeper(this);
    this.schedule();
  }

  untrack(lease: Lease): void {
    if (this.leases.delete(lease)) this.schedule();
  }

  /** Idempotent. Leases stay held in the store; their owners release them. */
  stop(): void {
    this.stopped = true;
    this.leases.clear();
    this.clearTimers();
  }

  private clearTimers(): void {
    if (this.renewTimer) clearTimeout(this.renewTimer);
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.renewTimer = this.deadlineTimer = null;
  }

  private schedule(): void {
    this.clearTimers();
    if (this.stopped || this.leases.size === 0) return;
    const now = readClock();
    let nextDue = this.failures > 0 ? this.retryAt - now.mono : Infinity;
    let nextDeadline = Infinity;
    for (const l of this.leases) {
      if (this.failures === 0) nextDue = Math.min(nextDue, this.dueIn(l, now));
      nextDeadline = Math.min(nextDeadline, l.remainingMs(now));
    }
    if (!this.inFlight) {
      this.renewTimer = setTimeout(() => void this.tick(), Math.max(0, nextDue));
      this.renewTimer.unref();
    }
    this.deadlineTimer = setTimeout(() => this.enforceDeadlines(), Math.max(0, nextDeadline) + 1);
    this.deadlineTimer.unref();
  }

  /** ms until `lease` should be renewed (negative: overdue). */
  private dueIn(lease: Lease, now: ReturnType<typeof readClock>): number {
    return lease.timing.heartbeatMs - (now.mono - lease.renewedAt.mono);
  }

  private enforceDeadlines(): void {
    for (const l of [...this.leases]) void l.lost; // reading `lost` marks a lease past its deadline
    this.schedule();
  }

  private async tick(): Promise<void> {
    this.renewTimer = null;
    if (this.stopped || this.inFlight) return;
    const start = readClock();
    const batch: Lease[] = [];
    for (const l of [...this.leases]) {
      if (l.lost) continue; // past its deadline: never renewed again
      const slack = l.timing.heartbeatMs / 2;
      if (this.dueIn(l, start) <= slack) batch.push(l);
    }
    if (batch.length === 0) {
      this.schedule();
      return;
    }
    this.inFlight = true;
    try {
      const { renewed } = await this.store.renew(
        batch.map((l) => ({ scope: l.scope, token: l.token, ttlMs: l.timing.ttlMs })),
      );
      for (const l of batch) {
        if (renewed.has(l.scope)) l.renewed(start);
        else
          l.markLost(
            "the store refused the renewal: the lease expired or its token was superseded",
          );
      }
      if (this.failures > 0) this.recordRecovery(batch, start.wall);
    } catch (e) {
      if (this.failures++ === 0) this.failingSince = start.wall;
      // Retry well inside the shortest heartbeat: the deadline, not the retry, ends the lease.
      const hb = Math.min(...batch.map((l) => l.timing.heartbeatMs));
      this.retryAt = readClock().mono + Math.max(50, Math.min(1000, hb / 4));
      this.events.onRenewError?.(e, batch);
      if (!isQuiesceError(e)) throw e; // a bug, not an outage: let it surface
    } finally {
      this.inFlight = false;
      this.schedule();
    }
  }

  /** After an outage, log once how long renewals failed and how close each lease came. */
  private recordRecovery(batch: Lease[], nowWall: number): void {
    const failures = this.failures;
    const forMs = nowWall - this.failingSince;
    this.failures = 0;
    for (const l of batch) {
      this.store
        .recordEvent({
          kind: EventKind.LeaseRenewFailed,
          scope: l.scope,
          token: l.token,
          runId: l.runId,
          host: l.record.owner.host,
          pid: l.record.owner.pid,
          message: `${failures} renewal attempt(s) failed over ${forMs} ms before one succeeded`,
          detail: { failures, forMs, remainingMs: l.remainingMs() },
        })
        .catch(() => undefined);
    }
  }
}
