/**
 * Grant at release: a holder's release hands the lease to the waiter first in line, in the same
 * commit, so that a contended handoff costs one durable commit instead of two (the release,
 * then the next holder's acquisition). The waiter learns it by reading the store, never from a
 * wake-up hint. These are the rules both stores and the waiter share.
 */
import type { ClockReading } from "./self-fencing.js";
import { formatDuration } from "./duration.js";

/**
 * Where the local validity window of a granted lease starts (I4). The grant was stamped at
 * `acquiredAt` on the store's clock, before a read that was sent at `sent` saw it with the
 * store's clock at `storeNow`. That read ran after it was sent, so the grant is at least
 * `storeNow - acquiredAt` older than `sent`: the window starts that much earlier, never later
 * than the store's own start of the lease. (The acquisition's rule, "start when the request
 * was sent", cannot serve here: the lease began before the waiter asked.)
 */
export function grantedStart(
  sent: ClockReading,
  storeNow: number,
  acquiredAt: number,
): ClockReading {
  const age = Math.max(0, storeNow - acquiredAt);
  return { mono: sent.mono - age, wall: sent.wall - age };
}

/** The `lease.acquired` message of a lease granted at the release of `releasedToken`. */
export function grantedMessage(token: number, ttlMs: number, releasedToken: number): string {
  return `acquired with token ${token} for ${formatDuration(ttlMs)} (handed over by the release of token ${releasedToken})`;
}

/** Why a lease granted to `ticket` was released without being used. */
export function handBackReason(ticket: number): string {
  return `granted to ticket ${ticket} after its waiter had stopped waiting`;
}
