import { leaseStatus, type LeaseRecord } from "../domain/lease.js";
import { iso } from "./iso-time.js";

export { iso };

/** The store clock of the listing being formatted: every lease of one listing shows the same. */
let nowMs = Number.NaN;
let nowIso = "";

/** A lease with its status on the store clock, as `lock list --json` and `GET /api/leases` give it. */
export function leaseJson(l: LeaseRecord, now: number) {
  const s = leaseStatus(l, now);
  if (now !== nowMs) {
    nowIso = iso(now);
    nowMs = now;
  }
  return {
    scope: l.scope,
    token: l.token,
    owner: l.owner,
    ttlMs: l.ttlMs,
    acquiredAt: iso(l.acquiredAt),
    heartbeatAt: iso(l.heartbeatAt),
    // A lease without expiry (written by another system) has none to show, not a crash.
    expiresAt: l.expiresAt === Number.MAX_SAFE_INTEGER ? null : iso(l.expiresAt),
    heartbeatAgeMs: s.heartbeatAgeMs,
    expiresInMs: s.expiresInMs,
    expired: s.expired,
    storeNow: nowIso,
    takeover: l.takeover ?? null,
  };
}

export type LeaseJson = ReturnType<typeof leaseJson>;
