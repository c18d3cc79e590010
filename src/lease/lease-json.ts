import { leaseStatus, type LeaseRecord } from "../domain/lease.js";

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** A lease with its status on the store clock, as `lock list --json` and `GET /api/leases` give it. */
export function leaseJson(l: LeaseRecord, now: number) {
  const s = leaseStatus(l, now);
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
    storeNow: iso(now),
    takeover: l.takeover ?? null,
  };
}

export type LeaseJson = ReturnType<typeof leaseJson>;
