import { formatDuration } from "../domain/duration.js";
import { EventKind } from "../domain/event.js";
import { describeOwner, leaseStatus, type LeaseRecord } from "../domain/lease.js";
import type { Store } from "../store/store.js";

/** Monitoring-plugin exit codes. */
export const CheckStatus = { OK: 0, WARNING: 1, CRITICAL: 2, UNKNOWN: 3 } as const;
export type CheckStatus = (typeof CheckStatus)[keyof typeof CheckStatus];
export const STATUS_NAMES = ["OK", "WARNING", "CRITICAL", "UNKNOWN"] as const;

export interface CheckFinding {
  severity: "warning" | "critical";
  code: "expired" | "held_too_long" | "no_expiry" | "takeover_refused";
  scope: string;
  message: string;
}

export interface CheckReport {
  status: CheckStatus;
  checkedAt: number;
  /** Refused takeovers are counted from here (the previous check), store clock. */
  since: number | null;
  leases: { held: number; expired: number; noExpiry: number; heldTooLong: number };
  refusedTakeovers: number;
  findings: CheckFinding[];
  /** Per lease, for the prometheus output. */
  detail: { scope: string; system: string; heldMs: number; expiredMs: number }[];
}

const MARKER = "check.last";

/**
 * The daily check that finds stale leases before they block a wave: every lease past its expiry
 * (CRITICAL: it blocks its scope until a takeover), leases held longer than `maxHoldMs`, leases
 * without an expiry, and takeovers refused since the previous check (WARNING).
 */
export async function runCheck(
  store: Store,
  o: { maxHoldMs: number | null; record: boolean },
): Promise<CheckReport> {
  const { leases, now } = await store.listLeases();
  const lastRaw = await store.readMarker(MARKER);
  const since = lastRaw === null ? null : Number(lastRaw);
  const refused = await store.listEvents({
    kinds: [EventKind.LeaseTakeoverRefused],
    since: since ?? undefined,
    limit: 10_000,
  });
  const findings: CheckFinding[] = [];
  const counts = { held: leases.length, expired: 0, noExpiry: 0, heldTooLong: 0 };
  for (const l of leases) findings.push(...judge(l, now, o.maxHoldMs, counts));
  const lastRefusal = new Map<string, string>();
  for (const e of refused) lastRefusal.set(e.scope ?? "-", e.message);
  for (const [scope, message] of lastRefusal)
    findings.push({ severity: "warning", code: "takeover_refused", scope, message });
  if (o.record) await store.writeMarker(MARKER, String(now));
  const status = findings.some((f) => f.severity === "critical")
    ? CheckStatus.CRITICAL
    : findings.length > 0
      ? CheckStatus.WARNING
      : CheckStatus.OK;
  return {
    status,
    checkedAt: now,
    since,
    leases: counts,
    refusedTakeovers: refused.length,
    findings,
    detail: leases.map((l) => ({
      scope: l.scope,
      system: l.owner.system,
      heldMs: now - l.acquiredAt,
      expiredMs: Math.max(0, now - l.expiresAt),
    })),
  };
}

function judge(
  l: LeaseRecord,
  now: number,
  maxHoldMs: number | null,
  counts: CheckReport["leases"],
): CheckFinding[] {
  const s = leaseStatus(l, now);
  const out: CheckFinding[] = [];
  const who = describeOwner(l.owner);
  if (l.expiresAt === Number.MAX_SAFE_INTEGER) {
    counts.noExpiry++;
    out.push({
      severity: "warning",
      code: "no_expiry",
      scope: l.scope,
      message: `${l.scope} has no expiry (held by ${who}): it can never go stale on its own`,
    });
  } else if (s.expired) {
    counts.expired++;
    out.push({
      severity: "critical",
      code: "expired",
      scope: l.scope,
      message: `${l.scope} expired ${formatDuration(-s.expiresInMs)} ago and blocks its scope (held by ${who}); run: quiesce lock takeover ${l.scope}`,
    });
  }
  if (maxHoldMs !== null && s.heldForMs > maxHoldMs) {
    counts.heldTooLong++;
    out.push({
      severity: "warning",
      code: "held_too_long",
      scope: l.scope,
      message: `${l.scope} has been held for ${formatDuration(s.heldForMs)} (more than ${formatDuration(maxHoldMs)}) by ${who}`,
    });
  }
  return out;
}
