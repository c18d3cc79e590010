import { formatDuration } from "./duration.js";
import { describeOwner, type LeaseRecord } from "./lease.js";
import type { ProbeResult } from "./probe.js";

/** How much proof of death a takeover needs (I5, I6). */
export interface TakeoverPolicy {
  /** The system this agent acts for; a lease of any other system is foreign (I6). */
  system: string;
  /**
   * Owners no probe can settle (another host with no probe, or one the probe cannot reach: a
   * partition): presumed dead once the lease has been expired, with no run activity, for this
   * much longer. null: never. Safe because what the owner ran is stopped by its own deadline:
   * here by the deadline guard, on a target by the remote guard (`wave run --via`), and the
   * remote grace is at least the grace plus the safety margin (checkRemoteGrace).
   */
  remoteGraceMs: number | null;
  /** `lock break --force`: go ahead when death is unknown. Never overrides an alive probe. */
  forceUnknown: boolean;
  /** `lock break --foreign`: an operator breaks another system's lease, knowingly. */
  allowForeign: boolean;
}

export interface TakeoverFacts {
  lease: LeaseRecord;
  storeNow: number;
  /** Every probe that ran, heartbeat included. */
  probes: readonly ProbeResult[];
  /** Store clock of the owner's last sign of life (heartbeat or run activity). */
  lastSignAt: number;
  commandProbeConfigured: boolean;
}

export type TakeoverDecision =
  | {
      action: "take_over";
      basis: "probe_dead" | "remote_grace" | "forced_unknown";
      summary: string;
      probes: readonly ProbeResult[];
    }
  | {
      action: "refuse";
      reason: "not_expired" | "foreign" | "owner_alive" | "death_unproven";
      summary: string;
      probes: readonly ProbeResult[];
    };

/**
 * The takeover rule (I5): the heartbeat has expired on the store clock, no probe says alive,
 * and death is shown: a probe says dead, or (where no probe can settle it: no probe, or one
 * that cannot reach the owner) the owner stayed silent for the remote grace period after expiry.
 * A foreign system's lease is never taken (I6) unless an operator says so explicitly.
 */
export function decideTakeover(f: TakeoverFacts, policy: TakeoverPolicy): TakeoverDecision {
  const { lease, storeNow, probes } = f;
  const who = describeOwner(lease.owner);
  const silentFor = storeNow - f.lastSignAt;
  const refuse = (
    reason: Extract<TakeoverDecision, { action: "refuse" }>["reason"],
    summary: string,
  ) => ({ action: "refuse", reason, summary, probes }) as const;

  if (lease.expiresAt > storeNow) {
    return refuse(
      "not_expired",
      `${lease.scope} is held by ${who}; its lease is valid for ${formatDuration(lease.expiresAt - storeNow)} more`,
    );
  }
  if (lease.owner.system !== policy.system && !policy.allowForeign) {
    return refuse(
      "foreign",
      `${lease.scope} is held by system "${lease.owner.system}" (${who}); quiesce never takes over another system's lease: coordinate with ${lease.owner.system}`,
    );
  }
  const alive = probes.find((p) => p.verdict === "alive");
  if (alive) {
    return refuse(
      "owner_alive",
      `${alive.evidence}; no renewal of ${lease.scope} for ${formatDuration(storeNow - lease.heartbeatAt)} (${alive.probe} probe)`,
    );
  }
  const dead = probes.find((p) => p.verdict === "dead");
  if (dead) {
    return {
      action: "take_over",
      basis: "probe_dead",
      summary: `owner gone: ${dead.evidence} (${dead.probe} probe)`,
      probes,
    };
  }
  const unknowns = probes.filter((p) => p.probe !== "heartbeat").map((p) => p.evidence);
  if (policy.remoteGraceMs !== null) {
    const needed = lease.ttlMs + policy.remoteGraceMs;
    if (silentFor >= needed) {
      return {
        action: "take_over",
        basis: "remote_grace",
        summary:
          `no heartbeat or run activity from ${who} for ${formatDuration(silentFor)} ` +
          `(TTL ${formatDuration(lease.ttlMs)} + remote grace ${formatDuration(policy.remoteGraceMs)}) and no probe could reach it: presumed dead by policy`,
        probes,
      };
    }
    if (policy.forceUnknown) return forced();
    return refuse(
      "death_unproven",
      `cannot prove ${who} is gone (${unknowns.join("; ")}); presumed dead after ${formatDuration(needed - silentFor)} more of silence (remote grace), or configure a --probe`,
    );
  }
  if (policy.forceUnknown) return forced();
  return refuse(
    "death_unproven",
    `cannot prove ${who} is gone (${unknowns.join("; ")}); ${f.commandProbeConfigured ? "the probe could not decide and no" : "no"} remote grace is configured`,
  );

  function forced(): TakeoverDecision {
    return {
      action: "take_over",
      basis: "forced_unknown",
      summary: `forced by the operator although death is unproven (${unknowns.join("; ")})`,
      probes,
    };
  }
}
