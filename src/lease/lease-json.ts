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
  // Spelled out rather than spread from fixedFields(): a spread followed by more properties
  // made this ten times slower (5.7 -> 89 ms for 10,000 leases); the unit test holds the two
  // to the same text.
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

/** The fields of leaseJson before the clock's, which only a new version of the lease changes
 * (leaseText's head). */
function fixedFields(l: LeaseRecord) {
  return {
    scope: l.scope,
    token: l.token,
    owner: l.owner,
    ttlMs: l.ttlMs,
    acquiredAt: iso(l.acquiredAt),
    heartbeatAt: iso(l.heartbeatAt),
    expiresAt: l.expiresAt === Number.MAX_SAFE_INTEGER ? null : iso(l.expiresAt),
  };
}

/**
 * A lease's JSON as leaseJson gives it, byte for byte, cut where the fields that depend on the
 * clock go: `head` (scope .. expiresAt, without the closing brace) and `tail` (takeover, and
 * the brace), both UTF-8 already; the clock's fields come between (`leaseClockText`, ASCII).
 * A reader that keeps leases between listings (quiesce serve) makes the parts once per version
 * of a lease and only the clock's fields per listing: with 10,000 leases, JSON.stringify of
 * every lease, and encoding the text, were most of GET /api/leases.
 */
export interface LeaseText {
  lease: LeaseRecord;
  head: Buffer;
  tail: Buffer;
}

export function leaseText(l: LeaseRecord): LeaseText {
  const fixed = JSON.stringify(fixedFields(l));
  return {
    lease: l,
    head: Buffer.from(fixed.slice(0, -1)),
    tail: Buffer.from(`,"takeover":${JSON.stringify(l.takeover ?? null)}}`),
  };
}

/**
 * The fields between a LeaseText's head and tail at `now` (ASCII: numbers, booleans and the
 * ISO time); `nowText` is JSON.stringify(iso(now)).
 */
export function leaseClockText(l: LeaseRecord, now: number, nowText: string): string {
  const s = leaseStatus(l, now);
  return `,"heartbeatAgeMs":${num(s.heartbeatAgeMs)},"expiresInMs":${num(s.expiresInMs)},"expired":${s.expired},"storeNow":${nowText}`;
}

/** A number as JSON.stringify writes it (NaN and the infinities are null). */
function num(n: number): string {
  return Number.isFinite(n) ? String(n) : "null";
}
