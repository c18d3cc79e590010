import { readClock } from "../process/clock.js";
import type { ClockReading } from "../domain/self-fencing.js";
import type { Alert } from "../domain/alert.js";
import { EventKind } from "../domain/event.js";
import type { LeaseOwner, LeaseRecord } from "../domain/lease.js";
import {
  decideTakeover,
  type TakeoverDecision,
  type TakeoverPolicy,
} from "../domain/takeover-policy.js";
import type { Store } from "../store/store.js";
import { hostIdentity } from "../process/process-identity.js";
import { runProbes, type ProbeConfig } from "./probes/run-probes.js";

/** Anything that can raise an alert without waiting for its delivery (src/alert's Alerter). */
export interface AlertEmitter {
  emit(alert: Alert): void;
}

export interface TakeoverSettings {
  policy: TakeoverPolicy;
  probes: ProbeConfig;
  alerter?: AlertEmitter;
}

export type TakeoverAttempt =
  | { outcome: "free"; now: number }
  | {
      outcome: "taken";
      lease: LeaseRecord;
      decision: TakeoverDecision;
      now: number;
      /**
       * Our clocks just before the compare-and-swap: the new lease's validity window starts
       * here, not before the probes (which may take longer than the TTL).
       */
      start: ClockReading;
    }
  | { outcome: "would_take_over"; stale: LeaseRecord; decision: TakeoverDecision; now: number }
  | { outcome: "refused"; stale: LeaseRecord; decision: TakeoverDecision; now: number }
  | { outcome: "lost_race"; current: LeaseRecord | null; now: number }
  | { outcome: "queued"; current: LeaseRecord | null; now: number };

export interface TakeoverRequest {
  scope: string;
  /** Who takes the lease on success. */
  owner: LeaseOwner;
  ttlMs: number;
  ticket: number | null;
  /** Explain the decision, change nothing, log nothing. */
  dryRun?: boolean;
}

/**
 * The takeover procedure (I5): look at the lease, run every probe, decide by the policy, and
 * only then compare-and-swap on the stale token. A takeover and a refusal are both events and
 * alerts; refusals are logged once per (scope, token, reason) per process, not once per poll.
 */
export class TakeoverProcedure {
  private readonly refusalsLogged = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly settings: TakeoverSettings,
  ) {}

  get policy(): TakeoverPolicy {
    return this.settings.policy;
  }

  async attempt(req: TakeoverRequest): Promise<TakeoverAttempt> {
    const { lease: stale, now } = await this.store.leases.getLease(req.scope);
    if (!stale) return { outcome: "free", now };
    const run = await runProbes(this.store, stale, now, this.settings.probes);
    const policy = { ...this.settings.policy, system: req.owner.system };
    const decision = decideTakeover(
      {
        lease: stale,
        storeNow: now,
        probes: run.probes,
        lastSignAt: run.lastSignAt,
        commandProbeConfigured: this.settings.probes.command !== null,
      },
      policy,
    );
    if (req.dryRun) {
      return decision.action === "take_over"
        ? { outcome: "would_take_over", stale, decision, now }
        : { outcome: "refused", stale, decision, now };
    }
    if (decision.action === "refuse") {
      if (decision.reason !== "not_expired") await this.logRefusal(stale, decision, req.owner);
      return { outcome: "refused", stale, decision, now };
    }
    const start = readClock();
    const r = await this.store.leases.takeOver({
      scope: req.scope,
      staleToken: stale.token,
      ttlMs: req.ttlMs,
      owner: req.owner,
      ticket: req.ticket,
      record: {
        previous: {
          token: stale.token,
          owner: stale.owner,
          heartbeatAt: stale.heartbeatAt,
          expiresAt: stale.expiresAt,
        },
        basis: decision.basis,
        summary: decision.summary,
        probes: decision.probes.map((p) => ({ ...p })),
      },
    });
    if (!r.ok)
      return {
        outcome: r.reason === "queued" ? "queued" : "lost_race",
        current: r.current,
        now: r.now,
      };
    this.alert({
      kind: EventKind.LeaseTakenOver,
      severity: "warning",
      scope: req.scope,
      token: r.lease.token,
      summary: `${req.scope}: took over token ${stale.token} from run ${stale.owner.runId} on ${stale.owner.host}: ${decision.summary}`,
      at: new Date(r.now).toISOString(),
      detail: { previous: stale, decision, newOwner: req.owner },
    });
    return { outcome: "taken", lease: r.lease, decision, now: r.now, start };
  }

  private async logRefusal(
    stale: LeaseRecord,
    decision: Extract<TakeoverDecision, { action: "refuse" }>,
    by: LeaseOwner,
  ) {
    const key = `${stale.scope}#${stale.token}#${decision.reason}`;
    if (this.refusalsLogged.has(key)) return;
    this.refusalsLogged.add(key);
    await this.store.events
      .record({
        kind: EventKind.LeaseTakeoverRefused,
        scope: stale.scope,
        token: stale.token,
        runId: by.runId,
        host: by.host,
        pid: by.pid,
        message: `takeover refused (${decision.reason.replace("_", " ")}): ${decision.summary}`,
        detail: {
          reason: decision.reason,
          summary: decision.summary,
          probes: decision.probes,
          owner: stale.owner,
        },
      })
      .catch(() => undefined);
    this.alert({
      kind: EventKind.LeaseTakeoverRefused,
      severity: decision.reason === "owner_alive" ? "critical" : "warning",
      scope: stale.scope,
      token: stale.token,
      summary: `${stale.scope}: takeover refused: ${decision.summary}`,
      at: new Date().toISOString(),
      detail: { reason: decision.reason, probes: decision.probes, owner: stale.owner },
    });
  }

  private alert(a: Omit<Alert, "reporter">): void {
    this.settings.alerter?.emit({ ...a, reporter: hostIdentity().host });
  }
}
