import type { LeaseRecord } from "../domain/lease.js";
import type { Store } from "../store/store.js";
import { journalCollector } from "./check-journal.js";
import { leaseCollector, refusedTakeoverCollector } from "./check-leases.js";
import { replicationCollector } from "./check-replication.js";
import { waveCollector } from "./check-waves.js";

/** Monitoring-plugin exit codes. */
export const CheckStatus = { OK: 0, WARNING: 1, CRITICAL: 2, UNKNOWN: 3 } as const;
export type CheckStatus = (typeof CheckStatus)[keyof typeof CheckStatus];
export const STATUS_NAMES = ["OK", "WARNING", "CRITICAL", "UNKNOWN"] as const;

/** One thing that blocks or endangers maintenance, or waits for a human. */
export interface CheckFinding {
  severity: "warning" | "critical";
  /** Stable, for scripts: expired, runtime_stuck_draining, run_needs_review, ... */
  code: string;
  /** The lease scope, run id, runtime or wave it is about. */
  subject: string;
  /** One sentence, with the command that looks further or resolves it. */
  message: string;
}

/** A count for perfdata (`perf=N`) and a gauge for Prometheus (`prom`). */
export interface CheckMetric {
  perf: string;
  prom: string;
  help: string;
  value: number;
  /** Per-subject gauges (labels -> value), for the Prometheus output only. */
  series?: { labels: Record<string, string>; value: number }[];
}

export interface CheckOptions {
  /** Leases held longer than this are a WARNING; null: no limit. */
  maxHoldMs: number | null;
  /** Refused takeovers younger than this are reported (a window: every check in it sees them). */
  windowMs: number;
  /** The leases, when the caller already read them (`/metrics` reads them once per scrape). */
  leases?: { leases: readonly LeaseRecord[]; now: number };
}

export interface CheckContext {
  store: Store;
  /** The store's clock when the check started (I10). */
  now: number;
  options: CheckOptions;
}

export interface CollectorOutput {
  findings: CheckFinding[];
  metrics: CheckMetric[];
}

/**
 * One source of findings. Each reads the store (or anything else) and says what it found;
 * `runCheck` ranks them. A new source (legacy lock files, ...) is one more collector.
 */
export interface CheckCollector {
  name: string;
  collect(ctx: CheckContext): Promise<CollectorOutput>;
}

export interface CheckReport {
  status: CheckStatus;
  /** Store clock, epoch ms. */
  checkedAt: number;
  options: CheckOptions;
  /** Worst first: every CRITICAL before any WARNING, each source in its own order. */
  findings: CheckFinding[];
  metrics: CheckMetric[];
}

export const DEFAULT_COLLECTORS: readonly CheckCollector[] = [
  leaseCollector,
  journalCollector,
  waveCollector,
  refusedTakeoverCollector,
  replicationCollector,
];

/**
 * The check that finds what blocks maintenance before it does. It only reads: it writes no
 * mark, so a check run by hand does not hide anything from the scheduled one.
 */
export async function runCheck(
  store: Store,
  options: CheckOptions,
  collectors: readonly CheckCollector[] = DEFAULT_COLLECTORS,
): Promise<CheckReport> {
  // Leases read by the caller carry the store's clock of that read: the same instant the
  // lease findings are judged at, and one round trip fewer (a /metrics scrape).
  const now = options.leases?.now ?? (await store.now());
  const ctx: CheckContext = { store, now, options };
  // The collectors only read, each its own part of the store: at once, not one round trip
  // after another (PostgreSQL answers them on separate connections). Findings keep their order.
  const outs = await Promise.all(collectors.map((c) => c.collect(ctx)));
  const findings: CheckFinding[] = outs.flatMap((o) => o.findings);
  const metrics: CheckMetric[] = outs.flatMap((o) => o.metrics);
  const ranked = [
    ...findings.filter((f) => f.severity === "critical"),
    ...findings.filter((f) => f.severity === "warning"),
  ];
  return { status: statusOf(ranked), checkedAt: now, options, findings: ranked, metrics };
}

export function statusOf(findings: readonly CheckFinding[]): CheckStatus {
  if (findings.some((f) => f.severity === "critical")) return CheckStatus.CRITICAL;
  return findings.length > 0 ? CheckStatus.WARNING : CheckStatus.OK;
}
