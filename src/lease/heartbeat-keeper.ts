import { formatDuration } from "../domain/duration.js";
import { isQuiesceError } from "../domain/errors.js";
import { EventKind } from "../domain/event.js";
import type { ClockReading } from "../domain/self-fencing.js";
import type { Store } from "../store/store.js";
import { readClock } from "../process/clock.js";
import type { KeeperHooks, Lease } from "./lease.js";

export interface KeeperEvents {
  /** A renewal attempt failed (store error); the keeper retries until each lease's deadline. */
  onRenewError?: (error: unknown, leases: readonly Lease[]) => void;
}

/** How often the keeper compares the wall clock with the monotonic one (a resume from suspend). */
const CLOCK_WATCH_MS = 250;
/** A wall clock this much further ahead of the monotonic one than before means a suspend. */
const CLOCK_JUMP_MS = 100;

/** A self-rescheduling timer that only ever moves earlier until it fires (one at a time). */
class WakeTimer {
  private timer: NodeJS.Timeout | null = null;
  private at = Infinity;

  constructor(private readonly fire: () => void) {}

  /** Due to fire by `now` (monotonic ms) but not fired yet: the event loop has been busy. */
  overdue(now: number): boolean {
    return this.timer !== null && this.at <= now;
  }

  /** Wakes at `at` (monotonic ms) unless already due to wake earlier. */
  arm(at: number, now: number): void {
    if (!Number.isFinite(at)) return; // nothing to wake for (setTimeout(Infinity) would fire at once)
    if (this.timer !== null && this.at <= at) return;

    this.clear();
    this.at = at;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.at = Infinity;
        this.fire();
      },
      Math.max(0, at - now),
    );
    this.timer.unref();
  }

  clear(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.at = Infinity;
  }
}

/**
 * Renews every lease a process holds, in one store call (one commit) per tick (STYLE:
 * self-rescheduling timers, renewals never overlap, timers unref'd so they never keep a process
 * alive).
 *
 * Two timers:
 *  - the renewal timer wakes at the earliest due renewal and renews every lease due within
 *    half a heartbeat, so leases acquired at different moments fall into one batch;
 *  - the deadline timer wakes at the earliest local deadline and marks every lease past it as
 *    lost (I4). It does not wait for a renewal in flight: a hung store cannot delay it.
 *
 * Tracking a lease only moves a timer earlier (O(1)); untracking never touches the timers (a
 * timer that fires with nothing to do just reschedules). Deciding that a lease is lost never
 * re-enters the scheduler, so thousands of leases expiring at once cost one pass.
 */
export class HeartbeatKeeper implements KeeperHooks {
  private readonly leases = new Set<Lease>();
  private readonly renewTimer = new WakeTimer(() => void this.tick());
  private readonly deadlineTimer = new WakeTimer(() => this.enforceDeadlines());
  private inFlight = false;
  private inFlightSince = 0;
  private stopped = false;
  /** Consecutive failed attempts, and when the first of them started (for the event). */
  private failures = 0;
  private failingSince = 0;
  /** While failing: when to try again (monotonic ms). */
  private retryAt = 0;
  /** The last failed attempt's error, for the reason a lease gives when it is lost. */
  private lastError: unknown = null;
  /** How long the last answered renewal took (ms), and when the keeper last ran a tick. */
  private lastRoundTripMs: number | null = null;
  private lastTickAt: number | null = null;

  /** Wall minus monotonic time at the last clock watch: a jump means a suspend (or a step). */
  private clockOffset: number | null = null;
  private clockWatch: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly events: KeeperEvents = {},
    private readonly clock: () => ClockReading = readClock,
  ) {}

  get size(): number {
    return this.leases.size;
  }

  /**
   * The store is unreachable as far as we know: the last renewal attempt failed, or the one in
   * flight has had no answer for over a second (a partition answers nothing at all).
   */
  get failing(): boolean {
    return this.failures > 0 || (this.inFlight && readClock().mono - this.inFlightSince > 1000);
  }

  /**
   * True when a renewal or a deadline check is past due because the event loop has not let the
   * timers run (a tight loop of awaits on the synchronous SQLite driver never does). Callers on
   * a hot path yield to the timers phase when it is.
   */
  overdue(now = readClock()): boolean {
    return this.renewTimer.overdue(now.mono) || this.deadlineTimer.overdue(now.mono);
  }

  /**
   * Why `lease` had no successful renewal in time, as far as this keeper can tell: the store
   * did not answer, it answered with errors, or the renewal never started because the process
   * did not run its timers (a blocked event loop, a starved CPU). Appended to the reason a
   * lease gives when it is lost, so that an operator reading exit 76 knows where to look.
   */
  explainMissedRenewal(lease: Lease, now: ClockReading = readClock()): string {
    const ms = (t: number) => formatDuration(Math.max(0, Math.round(t)));
    if (this.inFlight && this.leases.has(lease))
      return `a renewal sent ${ms(now.mono - this.inFlightSince)} ago had no answer from the store yet`;
    if (this.failures > 0) {
      const why = this.lastError instanceof Error ? this.lastError.message : String(this.lastError);
      return `${this.failures} renewal attempt(s) failed, the last: ${why}`;
    }
    const dueAt = lease.renewedAt.mono + lease.timing.heartbeatMs;
    const ran = this.lastTickAt === null ? "never" : `${ms(now.mono - this.lastTickAt)} ago`;
    const trip =
      this.lastRoundTripMs === null ? "" : `; the last renewal took ${ms(this.lastRoundTripMs)}`;
    return `the next renewal was due ${ms(now.mono - dueAt)} ago and had not started (the keeper last ran ${ran}: the process did not get to its timers${trip})`;
  }

  track(lease: Lease): void {
    if (this.stopped) throw new Error("the heartbeat keeper was stopped");
    this.leases.add(lease);
    lease.attachKeeper(this);
    const now = readClock();
    if (!this.inFlight && this.failures === 0) {
      this.renewTimer.arm(lease.renewedAt.mono + lease.timing.heartbeatMs, now.mono);
    }
    this.deadlineTimer.arm(now.mono + lease.validityAt(now) + 1, now.mono);
    this.watchClock();
  }

  /**
   * Node's timers run on the monotonic clock, which stands still while the machine is
   * suspended: after a resume, the deadline timer would fire only when its monotonic time comes.
   * A short unref'd tick compares the wall clock with the monotonic one; when the wall clock
   * moved ahead of it (a suspend), every lease's deadline is checked on the spot.
   */
  private watchClock(): void {
    if (this.clockWatch !== null) return;
    const first = this.clock();
    this.clockOffset = first.wall - first.mono;
    this.clockWatch = setInterval(() => this.onClockTick(), CLOCK_WATCH_MS);
    this.clockWatch.unref();
  }

  /** @internal one tick of the clock watch (tests call it with a jumped clock). */
  onClockTick(): void {
    if (this.leases.size === 0 || this.stopped) {
      if (this.clockWatch !== null) clearInterval(this.clockWatch);
      this.clockWatch = null;
      return;
    }
    const now = this.clock();
    const offset = now.wall - now.mono;
    const movedMs = this.clockOffset === null ? 0 : offset - this.clockOffset;
    this.clockOffset = offset;
    if (movedMs > CLOCK_JUMP_MS)
      this.loseExpired(
        now,
        `the wall clock moved ${formatDuration(Math.round(movedMs))} ahead of the monotonic one (a suspend, or the clock was set)`,
      );
  }

  untrack(lease: Lease): void {
    this.leases.delete(lease);
  }

  /** Idempotent. Leases stay held in the store; their owners release them. */
  stop(): void {
    this.stopped = true;
    if (this.clockWatch !== null) clearInterval(this.clockWatch);
    this.clockWatch = null;
    this.leases.clear();
    this.renewTimer.clear();
    this.deadlineTimer.clear();
  }

  /** Re-arms both timers from scratch; pure reads only (never marks a lease lost). */
  private schedule(now: ClockReading = readClock()): void {
    if (this.stopped || this.leases.size === 0) return;
    let nextDue = this.failures > 0 ? this.retryAt : Infinity;
    let nextDeadline = Infinity;
    for (const l of this.leases) {
      if (this.failures === 0) nextDue = Math.min(nextDue, l.renewedAt.mono + l.timing.heartbeatMs);
      nextDeadline = Math.min(nextDeadline, now.mono + l.validityAt(now));
    }
    if (!this.inFlight) this.renewTimer.arm(nextDue, now.mono);
    this.deadlineTimer.arm(nextDeadline + 1, now.mono);
  }

  /** Marks every lease past its local deadline as lost, in one pass; `cause`: why, if known. */
  private loseExpired(now: ClockReading, cause?: string): void {
    const late: Lease[] = [];
    for (const l of this.leases) if (l.validityAt(now) <= 0) late.push(l);
    for (const l of late) l.checkDeadline(now, cause); // marks it lost (and untracks it)
  }

  private enforceDeadlines(): void {
    const now = readClock();
    this.loseExpired(now);
    this.schedule(now);
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.inFlight) return;
    const start = readClock();
    this.loseExpired(start); // past its deadline: never renewed again
    this.lastTickAt = start.mono; // after: a lease found lost here says when the keeper ran before
    const batch: Lease[] = [];
    for (const l of this.leases) {
      const dueIn = l.timing.heartbeatMs - (start.mono - l.renewedAt.mono);
      if (dueIn <= l.timing.heartbeatMs / 2 || this.failures > 0) batch.push(l);
    }
    if (batch.length === 0) {
      this.schedule(start);
      return;
    }
    this.inFlight = true;
    this.inFlightSince = start.mono;
    try {
      const { refused } = await this.store.leases.renew(
        batch.map((l) => ({ scope: l.scope, token: l.token, ttlMs: l.timing.ttlMs })),
      );
      this.lastRoundTripMs = readClock().mono - start.mono;
      for (const l of batch) {
        if (!refused.has(l.scope)) l.renewed(start);
        else
          l.markLost(
            "the store refused the renewal: the lease expired or its token was superseded",
          );
      }
      if (this.failures > 0) this.recordRecovery(batch, start.wall);
    } catch (e) {
      if (this.failures++ === 0) this.failingSince = start.wall;
      this.lastError = e;
      // Retry well inside the shortest heartbeat: the deadline, not the retry, ends the lease.
      let hb = Infinity;
      for (const l of batch) hb = Math.min(hb, l.timing.heartbeatMs);
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
      this.store.events
        .record({
          kind: EventKind.LeaseRenewFailed,
          scope: l.scope,
          token: l.token,
          runId: l.runId,
          host: l.record.owner.host,
          pid: l.record.owner.pid,
          message: `${failures} renewal attempt(s) failed over ${formatDuration(forMs)} before one succeeded`,
          detail: { failures, forMs, remainingMs: l.remainingMs() },
        })
        .catch(() => undefined);
    }
  }
}
