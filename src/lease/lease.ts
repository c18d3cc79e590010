import { formatDuration } from "../domain/duration.js";
import { recordFenceRefusal } from "./fence-events.js";
import { ErrorCode, QuiesceError } from "../domain/errors.js";
import { EventKind } from "../domain/event.js";
import { describeFenceFailure } from "../domain/fencing.js";
import type { LeaseRecord, LeaseTiming } from "../domain/lease.js";
import {
  advanceWindow,
  isPastLocalDeadline,
  remainingValidity,
  type ClockReading,
  type ValidityWindow,
} from "../domain/self-fencing.js";
import type { FenceOutcome, ReleaseOutcome, ReleaseRequest, Store } from "../store/store.js";
import { readClock } from "../process/clock.js";
import { processStartTime } from "../process/process-identity.js";
import type { DeadlineSource } from "../process/deadline-guard.js";
import { EventOutbox } from "./event-outbox.js";

/** What the keeper needs from a lease it renews. */
export interface KeeperHooks {
  untrack(lease: Lease): void;
  /** Why the lease's renewals did not succeed in time (the keeper's own account). */
  explainMissedRenewal(lease: Lease, now: ClockReading): string;
}

/** How long the release of a lease already lost may take. */
const LOST_RELEASE_MS = 500;

async function withinOrThrow<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new QuiesceError(
                ErrorCode.STORE_UNAVAILABLE,
                `the store did not answer the release within ${ms} ms; the lease expires on its own`,
              ),
            ),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A held lease. `signal` aborts the moment the lease is lost: a renewal refused, or no
 * successful renewal by the local deadline (I4). Code about to start a side effect asks
 * `assertHeld()` or `remainingMs()` first; both check the deadline on the spot, so they are
 * right even if the timers have not run (a process that was just un-paused).
 */
export class Lease implements AsyncDisposable, DeadlineSource {
  readonly scope: string;
  readonly token: number;
  readonly runId: string;
  readonly timing: LeaseTiming;
  /** The record as acquired (store times). */
  readonly record: LeaseRecord;

  /**
   * Made when `signal` is first read: most short holds never read it, and an AbortController
   * made and aborted per lease was a tenth of a whole acquire+release cycle on SQLite.
   */
  private controller: AbortController | null = null;
  /** Why the lease ended (lost or released) before anyone read `signal`. */
  private endedWith: (() => Error) | null = null;
  private window: ValidityWindow;
  private lossReason: string | null = null;
  private released = false;
  private keeper: KeeperHooks | null = null;
  private readonly renewListeners = new Set<() => void>();
  /** While held, a loss is not logged until the holder says what it was (holdLossEvent). */
  private lossEventHeld = false;
  private lossEventWritten = false;
  private lostAt: number | null = null;

  constructor(
    private readonly store: Store,
    record: LeaseRecord,
    timing: LeaseTiming,
    acquiredAt: ClockReading,
    private readonly outbox: EventOutbox = new EventOutbox(store, null),
  ) {
    this.record = record;
    this.scope = record.scope;
    this.token = record.token;
    this.runId = record.owner.runId;
    this.timing = timing;
    this.window = { renewedAt: acquiredAt, budgetMs: timing.ttlMs - timing.safetyMarginMs };
  }

  /** Aborts the moment the lease is lost or released (its reason: a LEASE_LOST QuiesceError). */
  get signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      if (this.endedWith) this.controller.abort(this.endedWith());
    }
    return this.controller.signal;
  }

  /** Fires the signal with `reason` now, or when it is first read. */
  private end(reason: () => Error): void {
    if (this.endedWith !== null) return;
    this.endedWith = reason;
    if (this.controller !== null && !this.controller.signal.aborted) {
      this.controller.abort(reason());
    }
  }

  /** @internal the keeper attaches itself when it starts renewing this lease. */
  attachKeeper(keeper: KeeperHooks): void {
    this.keeper = keeper;
  }

  /** @internal when the request that last renewed this lease started. */
  get renewedAt(): ClockReading {
    return this.window.renewedAt;
  }

  /**
   * @internal ms left before the local deadline at `now`, WITHOUT marking the lease lost: the
   * keeper computes its timers with this, and decides about losses itself.
   */
  validityAt(now: ClockReading): number {
    return remainingValidity(this.window, now);
  }

  get lost(): boolean {
    this.checkDeadline();
    return this.lossReason !== null;
  }

  get lostReason(): string | null {
    return this.lossReason;
  }

  get isReleased(): boolean {
    return this.released;
  }

  /** Milliseconds the lease is still surely ours; 0 once lost or released. */
  remainingMs(now: ClockReading = readClock()): number {
    if (this.released || this.lost) return 0;
    return Math.max(0, remainingValidity(this.window, now));
  }

  /** Throws LEASE_LOST unless the lease is held and inside its local deadline. */
  assertHeld(): void {
    if (this.released) {
      throw new QuiesceError(
        ErrorCode.LEASE_LOST,
        `the lease on ${this.scope} (token ${this.token}) was released`,
      );
    }
    if (this.lost) {
      throw new QuiesceError(
        ErrorCode.LEASE_LOST,
        `the lease on ${this.scope} (token ${this.token}) was lost: ${this.lossReason ?? "unknown"}`,
      );
    }
  }

  /** Writes a key of the scope's fenced state; refused (LEASE_LOST) unless the token is current (I3). */
  async putState(key: string, value: string): Promise<void> {
    this.assertHeld();
    const r = await this.store.leases.putState(this.scope, this.token, key, value);
    await this.checkFence(r, `state write (${key})`);
  }

  /** Records the wrapped command's pid so that readers (and takeover probes) can find it. */
  async setChild(pid: number): Promise<void> {
    this.assertHeld();
    const r = await this.store.leases.setChild(this.scope, this.token, pid, processStartTime(pid));
    await this.checkFence(r, `command pid ${pid}`);
  }

  private async checkFence(r: FenceOutcome, what: string): Promise<void> {
    if (r.ok) return;
    const why = describeFenceFailure(this.scope, this.token, r.reason, r.current, r.now);
    this.markLost(`a fenced write was refused: ${why}`); // at once: the signal fires first
    await recordFenceRefusal(this.store, {
      ...{ scope: this.scope, token: this.token, what, reason: r.reason, current: r.current },
      ...{ runId: this.runId, pid: this.record.owner.pid },
    });
    throw new QuiesceError(ErrorCode.LEASE_LOST, why, { details: { reason: r.reason } });
  }

  /** @internal the keeper calls this after a renewal that started at `start` succeeded. */
  renewed(start: ClockReading): void {
    if (this.lossReason !== null) return;
    this.window = advanceWindow(this.window, start);
    for (const fn of this.renewListeners) fn();
  }

  /** Calls `fn` after every successful renewal (a deadline guard re-arms); returns the undo. */
  onRenewed(fn: () => void): () => void {
    this.renewListeners.add(fn);
    return () => this.renewListeners.delete(fn);
  }

  /**
   * Defers the `lease.lost` event of a loss that may yet turn out to be a lapse after the work
   * had ended (`quiesce run` learns late that its command had exited): the holder then calls
   * `recordLoss()` or `recordLapse()`. Without this, a loss is logged when it is noticed.
   */
  holdLossEvent(): void {
    this.lossEventHeld = true;
  }

  /** Logs the loss (once), unless it was already logged. */
  recordLoss(): void {
    if (this.lossReason === null || this.lossEventWritten) return;
    this.lossEventWritten = true;
    this.writeEvent(EventKind.LeaseLost, `holder gave the lease up as lost: ${this.lossReason}`, {
      reason: this.lossReason,
    });
  }

  /** Logs that the lease lapsed only after the work under it had ended: not a loss. */
  recordLapse(message: string, detail: Record<string, unknown> = {}): void {
    if (this.lossEventWritten) return;
    this.lossEventWritten = true;
    this.writeEvent(EventKind.LeaseLapsedAfterExit, message, {
      reason: this.lossReason,
      ...detail,
    });
  }

  /**
   * Waits (at most `timeoutMs`) until the events this lease logs through its outbox are
   * written: call it before exiting right after a loss, or the record may be left for later.
   */
  eventsWritten(timeoutMs = 2000): Promise<void> {
    return this.outbox.flush(timeoutMs);
  }

  private writeEvent(kind: EventKind, message: string, detail: Record<string, unknown>): void {
    const o = this.record.owner;
    void this.outbox.deliver({
      kind,
      scope: this.scope,
      token: this.token,
      runId: this.runId,
      host: o.host,
      pid: o.pid,
      message,
      // The holder's own time: the event itself may be written much later (event-outbox.ts).
      detail: { ...detail, at: new Date(this.lostAt ?? Date.now()).toISOString() },
    });
  }

  /**
   * @internal marks the lease lost if its local deadline has passed at `now`; the reason says
   * why, `cause` when the caller knows it, otherwise as the keeper explains it.
   */
  checkDeadline(now: ClockReading = readClock(), cause?: string): void {
    if (this.lossReason === null && !this.released && isPastLocalDeadline(this.window, now)) {
      const explained = cause ?? this.keeper?.explainMissedRenewal(this, now);
      const why = explained === undefined ? "" : `: ${explained}`;
      this.markLost(
        `no successful renewal within ${formatDuration(this.window.budgetMs)} (TTL ${formatDuration(this.timing.ttlMs)} minus a safety margin of ${formatDuration(this.timing.safetyMarginMs)})${why}`,
      );
    }
  }

  /**
   * @internal gives the lease up as lost: fires the signal, stops renewals and logs a
   * `lease.lost` event if the store can be reached. Never undone.
   */
  markLost(reason: string): void {
    if (this.lossReason !== null || this.released) return;
    this.lossReason = reason;
    this.keeper?.untrack(this);
    const lost = new QuiesceError(
      ErrorCode.LEASE_LOST,
      `lost the lease on ${this.scope} (token ${this.token}): ${reason}`,
    );
    this.end(() => lost);
    this.lostAt = Date.now();
    // The store may be the reason: the outbox keeps the event until it can be written.
    if (!this.lossEventHeld) this.recordLoss();
  }

  /**
   * Releases the lease (idempotent). A lease already lost is still offered for release: the
   * store refuses it if the token is no longer current or has expired, and says so in its log.
   */
  async release(reason = "released by its holder"): Promise<ReleaseOutcome> {
    if (this.released) return { ok: true };
    this.checkDeadline();
    this.keeper?.untrack(this);
    // If the store cannot be reached this throws and the lease stays unreleased (it will
    // expire); the caller may try again.
    const releasing = this.store.leases.release(this.requestToRelease(reason));
    // A lost lease's release only puts the refusal on record: when the store is what cut us
    // off, waiting for its timeouts would only delay the exit past the grace.
    const r =
      this.lossReason === null ? await releasing : await withinOrThrow(releasing, LOST_RELEASE_MS);
    this.markReleased();
    return r;
  }

  /**
   * @internal for a store write that releases this lease in its own commit (a wave host's
   * final state): the release request, after renewals stopped as release() stops them. Null
   * when the lease is released, lost or past its local deadline: then call release().
   */
  releaseRequest(reason: string): ReleaseRequest | null {
    if (this.released) return null;
    this.checkDeadline();
    if (this.lossReason !== null) return null;
    this.keeper?.untrack(this);
    return this.requestToRelease(reason);
  }

  private requestToRelease(reason: string): ReleaseRequest {
    const o = this.record.owner;
    return {
      scope: this.scope,
      token: this.token,
      runId: this.runId,
      host: o.host,
      pid: o.pid,
      reason,
    };
  }

  /** @internal the write carrying releaseRequest() committed and the store released the lease. */
  releasedByStore(): void {
    if (!this.released) this.markReleased();
  }

  private markReleased(): void {
    this.released = true;
    // Every normal release aborts the signal (if it was read; else once it is).
    this.end(() => {
      // No stack trace: it would be this line.
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 0;
      try {
        return new QuiesceError(ErrorCode.LEASE_LOST, `the lease on ${this.scope} was released`);
      } finally {
        Error.stackTraceLimit = limit;
      }
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release("scope of `await using` ended");
  }
}
