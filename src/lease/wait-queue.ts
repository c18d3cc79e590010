import { describeBlockingLease, type LeaseRecord } from "../domain/lease.js";
import type { TakeoverDecision } from "../domain/takeover-policy.js";
import type { AcquireOutcome, ScopeWatch, Store } from "../store/store.js";
import type { AcquireOptions, ResolvedAcquire } from "./acquire-options.js";
import { isTransientStoreError } from "../domain/errors.js";
import { readClock, sleep } from "../process/clock.js";
import { grantedStart } from "../domain/lease-grant.js";
import { remainingValidity } from "../domain/self-fencing.js";
import { retryTransient } from "../store/store-retry.js";

/** A waiter that stops refreshing its ticket (it died) drops out of line after this long. */
export const TICKET_TTL_MS = 3000;
const PROGRESS_EVERY_MS = 1000;
/**
 * With wake-ups live, the poll is only a safety net for a lost hint: this slow. (Without them,
 * e.g. a LISTEN connection that dropped, the waiter polls at `pollMs`.)
 */
export const SAFETY_POLL_MS = 500;

type Refused = Extract<AcquireOutcome, { ok: false }>;
export type WaitRefused = Refused & { decision?: TakeoverDecision };
export type WaitResult =
  { ok: true; lease: LeaseRecord; start: ReturnType<typeof readClock> } | WaitRefused;

/** A watch opened before the first acquisition (so a release after it is never missed). */
export interface EarlyWatch {
  watch: ScopeWatch;
  /** Its hints when the acquisition was sent. */
  hints: number;
  /** Whether it was live then. */
  live: boolean;
}

/** Called when the lease in the way has expired and this waiter is first in line. */
export type OnExpired = (
  holder: LeaseRecord,
  ticket: number,
) => Promise<
  | { lease: LeaseRecord; start: ReturnType<typeof readClock> }
  | { decision: TakeoverDecision }
  | null
>;

/**
 * `--wait`: take a ticket (carrying the owner and the TTL), then re-read until a release has
 * granted the lease to it (grant at release: see LeaseStore.release), or until the scope is
 * free with no live waiter ahead, and only then try the (writing) acquisition. Re-reads happen
 * when the store hints that something changed (a release, a noted expiry, a waiter leaving:
 * `store.leases.watch`), at the holder's expiry, and on a slow safety poll; a hint is never
 * taken for a grant, only a read is. SQLite's busy handler alone is unfair (one process
 * re-acquires over and over while others starve); the queue hands the lease over in arrival
 * order on both backends. Polls are reads, so waiting costs no fsyncs; the ticket is refreshed
 * every second so a dead waiter stops blocking the line within TICKET_TTL_MS (or, if a release
 * granted it the lease meanwhile, once that lease has expired and been taken over).
 *
 * An expired lease in the way is never waited out: the waiter first in line runs the takeover
 * procedure (`onExpired`) on each poll until the owner is shown dead or the wait ends.
 */
export async function waitInQueue(
  store: Store,
  req: ResolvedAcquire,
  options: AcquireOptions,
  first: WaitRefused,
  onExpired: OnExpired | null,
  /** A place in line already taken (with the refused acquisition), else null. */
  queued: number | null = null,
  /** The watch opened before that acquisition, and what it had seen then. */
  early: EarlyWatch | null = null,
): Promise<WaitResult> {
  const begin = readClock().mono;
  const deadline = begin + req.waitMs;
  const owner = req.owner;
  // The first read comes after the watch opens, so a release after the ticket (taken before
  // or after the watch) is never missed: the read or a hint sees it.
  const watch = early?.watch ?? store.leases.watch(req.scope);
  // A refusal read while the watch was already live is as good as a first read: any change
  // since is a hint. Only for a live holder or waiters ahead: an expired holder needs the
  // loop's takeover steps, and a free scope with nobody ahead is tried again at once.
  const skipFirstRead =
    early !== null &&
    early.live &&
    queued !== null &&
    ((first.reason === "held" && first.holder !== null) ||
      (first.reason === "queued" && first.waitersAhead > 0));
  // A dropped connection or a restarting server is waited out while the wait has time left.
  let ticket: number;
  try {
    ticket =
      queued ??
      (await retryTransient(
        () => store.leases.enqueue(req.scope, TICKET_TTL_MS, owner, req.timing.ttlMs),
        deadline,
        options.signal,
      ));
  } catch (e) {
    watch.close();
    throw e;
  }
  watch.setTicket(ticket);
  let last: WaitRefused = first;
  let backoffMs = 0;
  let refreshedAt = readClock().mono;
  let reportedAt = -Infinity;
  let expiryNoted = first.reason === "expired" ? first.holder?.token : undefined;
  let won = false;
  /** Progress for the caller (`quiesce run --wait` prints it): what is in the way. */
  const report = (now: number, left: number) => {
    if (!options.onWait) return;
    const blocking = last.holder
      ? describeBlockingLease(last.holder, last.now)
      : `${last.waitersAhead} waiter(s) ahead`;
    options.onWait({
      scope: req.scope,
      waitedMs: now - begin,
      remainingMs: left,
      waitersAhead: last.waitersAhead,
      message:
        last.decision?.action === "refuse"
          ? `${blocking}; takeover refused: ${last.decision.summary}`
          : blocking,
    });
  };
  try {
    if (skipFirstRead) {
      const now = readClock().mono;
      reportedAt = now;
      report(now, deadline - now);
      const untilExpiry = first.holder ? first.holder.expiresAt - first.now : Infinity;
      const pause = Math.min(Math.max(req.pollMs, SAFETY_POLL_MS), Math.max(1, untilExpiry + 1));
      await watch.next(
        early.hints,
        Math.min(pause, Math.max(0, deadline - readClock().mono)),
        options.signal,
      );
    }
    for (;;) {
      const now = readClock().mono;
      const hintsSeen = watch.hints; // before the read: a hint after it ends the next sleep
      let holderExpiresInMs = Infinity;
      try {
        if (now - refreshedAt >= TICKET_TTL_MS / 3) {
          await store.leases.refreshTicket(ticket, TICKET_TTL_MS);
          refreshedAt = now;
        }
        const sent = readClock();
        const p = await store.leases.peek(req.scope, ticket);
        if (p.granted && p.holder) {
          // A release handed us the lease (grant at release). Its window starts when the
          // store stamped the grant, not at this read (I4).
          const start = grantedStart(sent, p.now, p.holder.acquiredAt);
          const budget = {
            renewedAt: start,
            budgetMs: req.timing.ttlMs - req.timing.safetyMarginMs,
          };
          if (remainingValidity(budget, readClock()) > 0) {
            won = true;
            return { ok: true, lease: p.holder, start };
          }
          // Seen too late to be of use (this process was stopped or starved for about a TTL):
          // hand it back, and wait again at the end of the line.
          await store.leases.dequeue(ticket);
          ticket = await store.leases.enqueue(req.scope, TICKET_TTL_MS, owner, req.timing.ttlMs);
          watch.setTicket(ticket);
          refreshedAt = readClock().mono;
          continue;
        }
        const start = readClock();
        if (p.free && p.waitersAhead === 0) {
          const r = await store.leases.acquire({
            scope: req.scope,
            ttlMs: req.timing.ttlMs,
            owner,
            ticket,
          });
          if (r.ok) {
            won = true;
            return { ok: true, lease: r.lease, start };
          }
          last = r;
        } else {
          const expired = p.holder !== null && p.holder.expiresAt <= p.now;
          if (p.holder && !expired) holderExpiresInMs = p.holder.expiresAt - p.now;
          last = {
            ok: false,
            reason: p.holder ? (expired ? "expired" : "held") : "queued",
            holder: p.holder,
            now: p.now,
            waitersAhead: p.waitersAhead,
            decision: last.decision,
          };
          if (expired && p.holder) {
            if (expiryNoted !== p.holder.token) {
              expiryNoted = p.holder.token;
              await store.leases.noteExpiry(p.holder.scope, p.holder.token);
            }
            if (onExpired && p.waitersAhead === 0) {
              const t = await onExpired(p.holder, ticket);
              if (t && "lease" in t) {
                won = true;
                // The window starts at the compare-and-swap, not before the probes.
                return { ok: true, lease: t.lease, start: t.start };
              }
              if (t) last.decision = t.decision;
            }
          }
        }
        backoffMs = 0;
      } catch (e) {
        if (!isTransientStoreError(e) || readClock().mono >= deadline) throw e;
        backoffMs = Math.min(2000, Math.max(100, backoffMs * 2));
        options.onWait?.({
          scope: req.scope,
          waitedMs: now - begin,
          remainingMs: deadline - readClock().mono,
          waitersAhead: last.waitersAhead,
          message: `the store is unreachable (${(e as Error).message}); retrying`,
        });
      }
      const left = deadline - readClock().mono;
      if (left <= 0) return last;
      if (now - reportedAt >= PROGRESS_EVERY_MS) {
        reportedAt = now;
        report(now, left);
      }
      const poll = watch.live ? Math.max(req.pollMs, SAFETY_POLL_MS) : req.pollMs;
      const refreshIn = TICKET_TTL_MS / 3 - (readClock().mono - refreshedAt);
      // Wake at the holder's expiry too: nobody releases for a holder that died.
      const pause = Math.min(poll, Math.max(1, holderExpiresInMs + 1), Math.max(1, refreshIn));
      if (backoffMs > 0) await sleep(Math.min(backoffMs, left), options.signal);
      else await watch.next(hintsSeen, Math.min(pause, left), options.signal);
    }
  } finally {
    watch.close();
    if (!won) await store.leases.dequeue(ticket).catch(() => undefined);
  }
}
