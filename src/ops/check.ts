import { formatDuration } from "../domain/duration.js";
import { EventKind } from "../domain/event.js";
import { describeOwner, leaseStatus, type LeaseRecord } from "../domain/lease.js";
import { waveScope } from "../domain/wave-input.js";
import { HostState, WaveState } from "../domain/wave-state.js";
import type { Store } from "../store/store.js";

/** Monitoring-plugin exit codes. */
export const CheckStatus = { OK: 0, WARNING: 1, CRITICAL: 2, UNKNOWN: 3 } as const;
export type CheckStatus = (typeof CheckStatus)[keyof typeof CheckStatus];
export const STATUS_NAMES = ["OK", "WARNING", "CRITICAL", "UNKNOWN"] as const;

export interface CheckFinding {
  severity: "warning" | "critical";
  code:
    | "expired"
    | "held_too_long"
    | "no_expiry"
    | "takeover_refused"
    | "wave_needs_review"
    | "wave_halted"
    | "legacy_lock";
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
  /** Waves a human must look at: halted ones, and hosts whose patch may or may not have landed. */
  waves: { halted: number; hostsNeedingReview: number };
  findings: CheckFinding[];
  /** Per lease, for the prometheus output. */
  detail: { scope: string; system: string; heldMs: number; expiredMs: number }[];
}

const MARKER = "check.last";

/**
 * The daily check that finds stale leases before they block a wave: every lease past its expiry
 * (CRITICAL: it blocks its scope until a takeover), leases held longer than `maxHoldMs`, leases
 * without an expiry, takeovers refused since the previous check, and waves waiting for a person
 * (WARNING).
 */
export async function runCheck(
  store: Store,
  o: {
    maxHoldMs: number | null;
    record: boolean;
    /** Findings of other sources (legacy locks: src/ops/audit/legacy-lock-findings.ts). */
    extraFindings?: readonly CheckFinding[];
    /** The leases, when the caller already read them (`/metrics` reads them once per scrape). */
    leases?: { leases: readonly LeaseRecord[]; now: number };
  },
): Promise<CheckReport> {
  const { leases, now } = o.leases ?? (await store.listLeases());
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
  const waves = await judgeWaves(store, findings);
  findings.push(...(o.extraFindings ?? []));
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
    waves,
    findings,
    detail: leases.map((l) => ({
      scope: l.scope,
      system: l.owner.system,
      heldMs: now - l.acquiredAt,
      expiredMs: Math.max(0, now - l.expiresAt),
    })),
  };
}

/**
 * Halted waves and hosts in review are WARNINGs: nothing is stale, but the wave waits for a
 * person (a crashed agent shows up as its expired `wave:NAME` lease above).
 */
async function judgeWaves(store: Store, findings: CheckFinding[]): Promise<CheckReport["waves"]> {
  const { waves } = await store.waves.listWaves();
  const out = { halted: 0, hostsNeedingReview: 0 };
  for (const { wave, counts } of waves) {
    const scope = waveScope(wave.name);
    const review = counts[HostState.NEEDS_REVIEW] ?? 0;
    out.hostsNeedingReview += review;
    if (wave.state === WaveState.HALTED) out.halted++;
    if (review > 0)
      findings.push({
        severity: "warning",
        code: "wave_needs_review",
        scope,
        message: `wave ${wave.name}: ${review} host(s) need review (whether their patch landed is unknown); see quiesce wave status ${wave.name}`,
      });
    else if (wave.state === WaveState.HALTED)
      findings.push({
        severity: "warning",
        code: "wave_halted",
        scope,
        message: `wave ${wave.name} halted: ${wave.reason ?? "no reason recorded"}; see quiesce wave status ${wave.name}`,
      });
  }
  return out;
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
