/**
 * Self-fencing (I4): when does a holder have to treat its lease as lost, without asking anyone?
 *
 * A renewal that succeeded extended the store's expiry to (store time of the renewal + TTL).
 * The store stamped it after we started the request, so (start of request + TTL) is never later
 * than the real expiry; minus a safety margin it is a deadline we can check locally.
 *
 * Two clocks measure "time since that start": the monotonic clock (immune to wall-clock steps,
 * but on Linux it stops while the machine is suspended) and the wall clock (keeps going through
 * a suspend, but can be stepped). A process that was paused, stopped or suspended must notice,
 * so the lease counts as lost when EITHER clock says the budget is used up. A wall clock that
 * went backwards gives no extra time.
 */
export interface ClockReading {
  /** Monotonic milliseconds (monoMs() in src/process/clock.ts). */
  mono: number;
  /** Wall-clock epoch milliseconds (Date.now()). */
  wall: number;
}

export interface ValidityWindow {
  /** When the request that last renewed (or acquired) the lease was started. */
  renewedAt: ClockReading;
  /** TTL minus the safety margin. */
  budgetMs: number;
}

export function elapsedSince(start: ClockReading, now: ClockReading): number {
  const mono = now.mono - start.mono;
  const wall = Math.max(0, now.wall - start.wall);
  return Math.max(mono, wall);
}

/** How long the lease is still surely ours; 0 or less means lost. */
export function remainingValidity(window: ValidityWindow, now: ClockReading): number {
  return window.budgetMs - elapsedSince(window.renewedAt, now);
}

export function isPastLocalDeadline(window: ValidityWindow, now: ClockReading): boolean {
  return remainingValidity(window, now) <= 0;
}

/**
 * After a renewal that was started at `start` succeeds, the window moves there, but never
 * backwards: responses can arrive out of order after a retry.
 */
export function advanceWindow(window: ValidityWindow, start: ClockReading): ValidityWindow {
  return start.mono > window.renewedAt.mono ? { ...window, renewedAt: start } : window;
}
