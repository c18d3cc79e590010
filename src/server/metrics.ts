import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import { EFFECT_STATES } from "../domain/effect-state.js";
import { EventKind } from "../domain/event.js";
import { RUN_STATES } from "../domain/journal-record.js";
import { HOST_STATES } from "../domain/wave-state.js";
import { RUNTIME_STATES } from "../domain/runtime-state.js";
import { CheckStatus, runCheck, type CheckReport } from "../ops/check.js";
import type { Store } from "../store/store.js";
import type { LeaseMirror } from "./lease-mirror.js";
import { leaseAgeMetric } from "./lease-age-metric.js";

const COUNTED = {
  [EventKind.LeaseTakenOver]: "takeovers",
  [EventKind.LeaseTakeoverRefused]: "refused",
  [EventKind.LeaseBroken]: "breaks",
} as const;

/**
 * `GET /metrics`: the store's state as Prometheus metrics, read once per scrape. Label sets are
 * bounded by what an operator names (scopes held now, waves, states): never run ids. The
 * counters count the store's events since it began: the first scrape reads their history
 * once, each later one only the events after the last it saw.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  private readonly g;
  private readonly c;
  private cursor: number | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly maxHoldMs: number | null,
    /** Where the leases come from (the server's LeaseMirror); default the store's listing. */
    private readonly leases: Pick<LeaseMirror, "listLeases"> = store.leases,
  ) {
    const r = [this.registry];
    const gauge = (name: string, help: string, labelNames: string[] = []) =>
      new Gauge({ name, help, labelNames, registers: r });
    const counter = (name: string, help: string) => new Counter({ name, help, registers: r });
    this.g = {
      up: gauge("quiesce_store_up", "1 when the last read of the store succeeded, else 0"),
      check: gauge(
        "quiesce_check_status",
        "The check verdict: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN",
      ),
      leases: gauge("quiesce_leases", "Leases held, by state (live, expired)", ["state"]),
      expired: gauge(
        "quiesce_leases_expired_unreleased",
        "Leases past their expiry and never released",
      ),
      runs: gauge("quiesce_runs", "Journal runs by state", ["state"]),
      effects: gauge("quiesce_effects", "Journal side effects by state", ["state"]),
      review: gauge(
        "quiesce_review_queue",
        "Waiting for a person: runs and wave hosts in needs_review",
        ["kind"],
      ),
      hosts: gauge("quiesce_wave_hosts", "Hosts of each wave by state", ["wave", "state"]),
      runtimes: gauge("quiesce_runtimes", "Maintenance runtimes by state", ["state"]),
    };
    this.c = {
      takeovers: counter("quiesce_takeovers_total", "Stale leases taken over after proof of death"),
      refused: counter(
        "quiesce_takeovers_refused_total",
        "Takeovers refused (owner alive, death unproven, foreign)",
      ),
      breaks: counter("quiesce_lease_breaks_total", "Leases broken by an operator (lock break)"),
    };
    collectDefaultMetrics({ register: this.registry });
    // prom-client also exports these gauges under a `_total` name, which Prometheus reserves
    // for counters (promtool flags them); the same values stay as nodejs_active_handles etc.
    for (const name of [
      "nodejs_active_handles_total",
      "nodejs_active_requests_total",
      "nodejs_active_resources_total",
    ])
      this.registry.removeSingleMetric(name);
  }

  /** The exposition text. Scrapes run one at a time (they reset and refill the gauges). */
  render(): Promise<string> {
    const next = this.queue.then(() => this.scrape());
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async scrape(): Promise<string> {
    let ages: string;
    try {
      ages = await this.update();
      this.g.up.set(1);
    } catch {
      // The store is down: say so, and drop the per-lease series rather than show stale ones.
      this.g.up.set(0);
      this.g.check.set(CheckStatus.UNKNOWN);
      ages = leaseAgeMetric([], 0);
    }
    // prom-client separates metrics by a blank line and ends with a newline; so does this.
    return `${await this.registry.metrics()}\n${ages}\n`;
  }

  /** Refills the gauges; returns the per-lease heartbeat ages, read at the same instant. */
  private async update(): Promise<string> {
    const s = this.store;
    // Independent reads at once (PostgreSQL answers them on separate connections); the check
    // judges the very leases the gauges show.
    const [{ read, check }, counts, waves, runtimes] = await Promise.all([
      this.leases.listLeases().then(async (read) => ({
        read,
        check: await runCheck(s, { maxHoldMs: this.maxHoldMs, windowMs: 86_400_000, leases: read }),
      })),
      s.journal.stateCounts(),
      s.waves.listWaves(),
      s.journal.listRuntimes(),
      this.count(),
    ]);
    const g = this.g;
    g.check.set(check.status);
    const expired = read.leases.filter((l) => l.expiresAt <= read.now).length;
    g.leases.set({ state: "live" }, read.leases.length - expired);
    g.leases.set({ state: "expired" }, expired);
    g.expired.set(expired);
    for (const st of RUN_STATES) g.runs.set({ state: st }, counts.runs[st] ?? 0);
    for (const st of EFFECT_STATES) g.effects.set({ state: st }, counts.effects[st] ?? 0);
    g.review.set({ kind: "run" }, counts.runs.needs_review ?? 0);
    g.review.set({ kind: "wave_host" }, checkMetric(check, "wave_hosts_needing_review"));
    g.hosts.reset();
    for (const { wave, counts: hc } of waves.waves)
      for (const st of HOST_STATES) g.hosts.set({ wave: wave.name, state: st }, hc[st] ?? 0);
    const byState = new Map<string, number>();
    for (const rt of runtimes.runtimes) byState.set(rt.state, (byState.get(rt.state) ?? 0) + 1);
    for (const st of RUNTIME_STATES) g.runtimes.set({ state: st }, byState.get(st) ?? 0);
    return leaseAgeMetric(read.leases, read.now);
  }

  /** Advances the counters by the takeovers, refusals and breaks written since the last scrape. */
  private async count(): Promise<void> {
    const kinds = Object.keys(COUNTED);
    const events = await this.store.events.list({
      kinds,
      afterId: this.cursor ?? 0,
      // The first scrape reads the history; these events are rare (one per incident).
      limit: this.cursor === null ? 1_000_000 : 100_000,
    });
    for (const e of events) this.c[COUNTED[e.kind as keyof typeof COUNTED]].inc();
    const newest = events[events.length - 1]?.id;
    if (newest !== undefined) this.cursor = newest;
    else this.cursor ??= 0;
  }
}

/** A count the check reports (its perfdata name), 0 when absent. */
function checkMetric(r: CheckReport, perf: string): number {
  return r.metrics.find((m) => m.perf === perf)?.value ?? 0;
}
