import { formatDuration } from "./duration.js";
import { invalidInput } from "./errors.js";

/** Who holds a lease. Recorded at acquisition so that a later reader (a human, or the
 * takeover probes) can tell which process on which boot of which host to look for. */
export interface LeaseOwner {
  /** The run this lease belongs to (`QUIESCE_RUN_ID`). */
  runId: string;
  /** The system that holds it: `quiesce` for our agents; `backup`, `hypervisor`, ... otherwise. */
  system: string;
  host: string;
  /** The holding process, when there is one that outlives the acquisition. */
  pid: number | null;
  /** The holder's start time as the OS reports it, to tell a reused pid apart. */
  pidStart: string | null;
  /** The host's boot id when the lease was taken: a different one now means the holder is gone. */
  bootId: string | null;
  /** The wrapped command, when the holder is `quiesce run`. */
  childPid: number | null;
  childPidStart: string | null;
  /** The wrapped command line, for humans reading `lock show`. */
  command: string | null;
  note: string | null;
}

/** The detail of a `lease.acquired` event, the same on every backend (`quiesce events --json`). */
export function acquiredEventDetail(
  o: LeaseOwner,
  ttlMs: number,
): Pick<LeaseOwner, "system" | "command" | "note"> & { ttlMs: number } {
  return { system: o.system, ttlMs, command: o.command, note: o.note };
}

/** A lease as stored. Times are epoch milliseconds on the store's clock (I10). */
export interface LeaseRecord {
  scope: string;
  token: number;
  owner: LeaseOwner;
  ttlMs: number;
  acquiredAt: number;
  heartbeatAt: number;
  expiresAt: number;
  /** Set when this lease was obtained by taking over a stale one (I5). */
  takeover?: TakeoverRecord | null;
}

/** What a takeover leaves on the new lease: whom it replaced and why that was allowed. */
export interface TakeoverRecord {
  previous: { token: number; owner: LeaseOwner; heartbeatAt: number; expiresAt: number };
  basis: string;
  summary: string;
  probes: { probe: string; verdict: string; evidence: string }[];
}

/** Judged on the store's clock: `now` must come from the store, never from the reader. */
export function isExpired(lease: Pick<LeaseRecord, "expiresAt">, storeNow: number): boolean {
  return lease.expiresAt <= storeNow;
}

export interface LeaseStatus {
  expired: boolean;
  heartbeatAgeMs: number;
  /** Positive: time left; negative: how long ago it expired. */
  expiresInMs: number;
  heldForMs: number;
}

export function leaseStatus(lease: LeaseRecord, storeNow: number): LeaseStatus {
  return {
    expired: isExpired(lease, storeNow),
    heartbeatAgeMs: storeNow - lease.heartbeatAt,
    expiresInMs: lease.expiresAt - storeNow,
    heldForMs: storeNow - lease.acquiredAt,
  };
}

/** `run r-1, on db-7, pid 4121, command pid 4130` (`run r-1 of system "backup", ...` for others). */
export function describeOwner(owner: LeaseOwner): string {
  const parts = [`run ${owner.runId}`];
  if (owner.system !== "quiesce") parts[0] += ` of system "${owner.system}"`;
  parts.push(`on ${owner.host}`);
  if (owner.pid !== null) parts.push(`pid ${owner.pid}`);
  if (owner.childPid !== null) parts.push(`command pid ${owner.childPid}`);
  return parts.join(", ");
}

/**
 * The sentence a blocked acquirer reads. An expired lease is spelled out as such: nothing
 * deletes it on expiry alone; clearing it needs proof that its owner is gone.
 */
export function describeBlockingLease(
  lease: LeaseRecord,
  storeNow: number,
  options: { takeoverTried?: boolean } = {},
): string {
  const s = leaseStatus(lease, storeNow);
  const who = describeOwner(lease.owner);
  if (s.expired) {
    return (
      `${lease.scope} is held by ${who} (token ${lease.token}) since ${new Date(lease.acquiredAt).toISOString()}; ` +
      `its lease expired ${formatDuration(-s.expiresInMs)} ago (last heartbeat ${formatDuration(s.heartbeatAgeMs)} ago) ` +
      (options.takeoverTried
        ? "and was never released"
        : `and was never released: it stays until a takeover proves the owner is gone (quiesce lock takeover ${lease.scope})`)
    );
  }
  return (
    `${lease.scope} is held by ${who} (token ${lease.token}) since ${new Date(lease.acquiredAt).toISOString()}; ` +
    `last heartbeat ${formatDuration(s.heartbeatAgeMs)} ago, expires in ${formatDuration(s.expiresInMs)}`
  );
}

/** What `run` and the library use when the caller gives only a TTL. */
export const DEFAULT_TTL_MS = 30_000;
export const MIN_TTL_MS = 100;

export interface LeaseTiming {
  ttlMs: number;
  heartbeatMs: number;
  /** How long before the store's expiry the holder treats the lease as lost (I4). */
  safetyMarginMs: number;
}

/**
 * Validates TTL and heartbeat together and derives the self-fencing margin.
 *
 * The margin covers what can make our local deadline later than the store's expiry: the
 * request's trip to the store (the store stamps the renewal after we start timing), clock rate
 * differences, and the time it takes to stop work once the deadline passes. A tenth of the TTL,
 * at least 50 ms and at most 5 s, and always leaving the heartbeat room to renew in time.
 */
export function leaseTiming(
  ttlMs: number,
  heartbeatMs?: number,
  safetyMarginMs?: number,
): LeaseTiming {
  if (ttlMs < MIN_TTL_MS) {
    throw invalidInput(
      `--ttl: ${formatDuration(ttlMs)} is too short; a lease needs at least ${MIN_TTL_MS}ms (and a TTL of 0 would never expire)`,
    );
  }
  const hb = heartbeatMs ?? Math.max(1, Math.floor(ttlMs / 3));
  if (hb <= 0) throw invalidInput(`--heartbeat: must be longer than 0`);
  if (hb >= ttlMs) {
    throw invalidInput(
      `--heartbeat: ${formatDuration(hb)} is not shorter than --ttl ${formatDuration(ttlMs)}; the lease would expire between heartbeats`,
    );
  }
  const margin = safetyMarginMs ?? Math.min(5000, Math.max(50, Math.floor(ttlMs / 10)));
  if (!Number.isFinite(margin) || margin < 0 || margin >= ttlMs) {
    // A negative or NaN margin would put the local deadline after the store's expiry (or
    // nowhere), and the holder would never self-fence in time (I4).
    throw invalidInput(
      `safety margin: ${String(margin)} ms is not a duration between 0 and the TTL (${ttlMs} ms)`,
    );
  }
  if (hb + margin >= ttlMs) {
    throw invalidInput(
      `--heartbeat: ${formatDuration(hb)} leaves no time to renew before the lease's local deadline ` +
        `(--ttl ${formatDuration(ttlMs)} minus a safety margin of ${formatDuration(margin)}); use at most ${formatDuration(Math.floor((ttlMs - margin) / 2))}`,
    );
  }
  return { ttlMs, heartbeatMs: hb, safetyMarginMs: margin };
}
