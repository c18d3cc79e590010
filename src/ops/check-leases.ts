import { formatDuration } from "../domain/duration.js";
import { EventKind } from "../domain/event.js";
import { describeOwner, leaseStatus } from "../domain/lease.js";
import type { CheckCollector, CheckFinding } from "./check.js";

/**
 * Leases: an expired lease nobody released blocks its scope until a takeover (CRITICAL); a
 * lease without expiry can never go stale on its own, and one held past --max-hold is likely
 * forgotten (WARNING).
 */
export const leaseCollector: CheckCollector = {
  name: "leases",
  async collect({ store, now, options }) {
    const { leases } = options.leases ?? (await store.leases.listLeases());
    const findings: CheckFinding[] = [];
    let expired = 0;
    let noExpiry = 0;
    let heldTooLong = 0;
    for (const l of leases) {
      const s = leaseStatus(l, now);
      if (l.expiresAt === Number.MAX_SAFE_INTEGER) {
        noExpiry++;
        findings.push({
          severity: "warning",
          code: "no_expiry",
          subject: l.scope,
          message: `${l.scope} has no expiry (held by ${describeOwner(l.owner)}): it can never go stale on its own`,
        });
      } else if (s.expired) {
        expired++;
        findings.push({
          severity: "critical",
          code: "expired",
          subject: l.scope,
          message: `${l.scope} expired ${formatDuration(-s.expiresInMs)} ago and blocks its scope (held by ${describeOwner(l.owner)}); run: quiesce lock takeover ${l.scope}`,
        });
      }
      if (options.maxHoldMs !== null && s.heldForMs > options.maxHoldMs) {
        heldTooLong++;
        findings.push({
          severity: "warning",
          code: "held_too_long",
          subject: l.scope,
          message: `${l.scope} has been held for ${formatDuration(s.heldForMs)} (more than ${formatDuration(options.maxHoldMs)}) by ${describeOwner(l.owner)}`,
        });
      }
    }
    // One label set per lease, shared by its two series.
    const labels = leases.map((l) => ({ scope: l.scope, system: l.owner.system }));
    return {
      findings,
      metrics: [
        {
          perf: "leases",
          prom: "leases_held",
          help: "Leases held, live or expired",
          value: leases.length,
        },
        {
          perf: "expired",
          prom: "leases_expired",
          help: "Leases past their expiry and not released",
          value: expired,
        },
        {
          perf: "no_expiry",
          prom: "leases_without_expiry",
          help: "Leases that can never expire",
          value: noExpiry,
        },
        {
          perf: "held_too_long",
          prom: "leases_held_too_long",
          help: "Leases held longer than --max-hold",
          value: heldTooLong,
        },
        {
          perf: "",
          prom: "lease_held_seconds",
          help: "How long each lease has been held",
          value: 0,
          series: leases.map((l, i) => ({
            labels: labels[i]!,
            value: (now - l.acquiredAt) / 1000,
          })),
        },
        {
          perf: "",
          prom: "lease_expired_seconds",
          help: "How long ago each stale lease expired (0: live)",
          value: 0,
          series: leases.map((l, i) => ({
            labels: labels[i]!,
            value: Math.max(0, now - l.expiresAt) / 1000,
          })),
        },
      ],
    };
  },
};

/**
 * Takeovers refused within the window (default 24h): an owner alive but not heartbeating, a
 * death nobody could prove, a foreign system's lease. A window, not a mark: a check run by
 * hand does not hide them from the scheduled one.
 */
export const refusedTakeoverCollector: CheckCollector = {
  name: "refused-takeovers",
  async collect({ store, now, options }) {
    const refused = await store.events.list({
      kinds: [EventKind.LeaseTakeoverRefused],
      since: now - options.windowMs,
      limit: 10_000,
    });
    const byScope = new Map<string, { count: number; at: number; message: string }>();
    for (const e of refused) {
      const scope = e.scope ?? "-";
      const seen = byScope.get(scope);
      if (!seen || e.at >= seen.at)
        byScope.set(scope, { count: (seen?.count ?? 0) + 1, at: e.at, message: e.message });
      else seen.count++;
    }
    const window = formatDuration(options.windowMs);
    const findings: CheckFinding[] = [...byScope].map(([scope, r]) => ({
      severity: "warning",
      code: "takeover_refused",
      subject: scope,
      message: `takeover of ${scope} refused ${r.count} time(s) in the last ${window}, last ${formatDuration(now - r.at)} ago: ${r.message}`,
    }));
    return {
      findings,
      metrics: [
        {
          perf: "refused_takeovers",
          prom: "takeovers_refused",
          help: "Takeovers refused within the check's --window",
          value: refused.length,
        },
      ],
    };
  },
};
