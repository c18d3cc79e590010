import { formatDuration } from "../domain/duration.js";
import { EffectState } from "../domain/effect-state.js";
import { ErrorCode, QuiesceError } from "../domain/errors.js";
import { validateMaintenanceId } from "../domain/journal-names.js";
import { RunState } from "../domain/journal-record.js";
import {
  deadlineDecision,
  mayQuiesce,
  RuntimeState,
  type DrainProgress,
} from "../domain/runtime-state.js";
import { crashPoint } from "../fault/crash-points.js";
import { quarantine } from "../journal/effect-driver.js";
import type { Runtime, RuntimeOutcome } from "./runtime.js";
import { MaintenanceWindow } from "./window.js";

export interface DrainOptions {
  /** The maintenance window's id (`mw-...`); default `drain-<time>`. */
  maintenanceId?: string;
  /** Overrides the policy's drain_timeout for this drain. */
  drainTimeoutMs?: number;
  /** Why, for the record: "maintenance requested by ops@host", "SIGTERM", ... */
  reason?: string;
}

export function drainProgress(rt: Runtime): DrainProgress {
  let unclassified = 0;
  for (const r of rt.active) unclassified += r.unclassified;
  return { unclassifiedEffects: unclassified, activeRuns: rt.active.size + rt.starting };
}

/**
 * The drain (I8): DRAINING is committed before anything else (no new work from that moment),
 * active runs continue to their next checkpoint, where they are suspended; QUIESCED is written
 * only when no run is active and no effect is dispatched-but-unclassified; STOPPED only after
 * QUIESCED. If the deadline comes first, the policy decides (deadlineDecision) and the runtime
 * ends QUIESCED -> STOPPED or NEEDS_REVIEW. The lease is released at the end.
 */
export async function runDrain(rt: Runtime, o: DrainOptions): Promise<RuntimeOutcome> {
  if (rt.keeper.state !== RuntimeState.RUNNING)
    return { state: rt.keeper.state, leaseLost: rt.lease.lost, reason: null };
  const maintenanceId = validateMaintenanceId(
    o.maintenanceId ?? `drain-${Date.now()}`,
    "maintenance id",
  );
  const timeoutMs = o.drainTimeoutMs ?? rt.policy.drainTimeoutMs;
  rt.draining = true;
  let deadlinePassed = false;
  const window = new MaintenanceWindow(rt.keeper, rt.store);
  await window.enterDraining({
    maintenanceId,
    timeoutMs,
    activeRuns: drainProgress(rt).activeRuns,
    note: `${o.reason ?? "drain requested"}; drain timeout ${formatDuration(timeoutMs)}`,
    onDeadline: () => {
      deadlinePassed = true;
      rt.changes.notify();
    },
  });
  rt.say(
    `draining for ${maintenanceId}: no new work; ${rt.active.size} active run(s) continue to their next checkpoint (deadline in ${formatDuration(timeoutMs)})`,
  );
  rt.forceDeadline = () => window.forceDeadline();
  try {
    for (;;) {
      if (rt.lease.lost)
        throw new QuiesceError(
          ErrorCode.LEASE_LOST,
          rt.lease.lostReason ?? "lease lost while draining",
        );
      const p = drainProgress(rt);
      if (mayQuiesce(p)) break;
      if (deadlinePassed) return await atDeadline(rt, window, p, maintenanceId);
      await rt.changes.wait();
      // Something changed (a run reached a checkpoint, work was refused): a kill here is a
      // crash in the middle of the drain, with runs still in flight.
      crashPoint("runtime.drain");
    }
  } finally {
    window.cancel();
    rt.forceDeadline = null;
  }
  await window.end({
    maintenanceId,
    note: "every run reached a checkpoint; no side effect in flight",
    review: null,
  });
  return stopped(rt, maintenanceId);
}

/** STOPPED is recorded: release the lease and say so. */
async function stopped(rt: Runtime, maintenanceId: string): Promise<RuntimeOutcome> {
  await rt.lease.release(`runtime ${rt.id} stopped (${maintenanceId})`).catch(() => undefined);
  rt.say(`stopped: quiesced for ${maintenanceId}`);
  return { state: RuntimeState.STOPPED, leaseLost: false, reason: null };
}

/** The deadline passed with runs still active: apply the policy, record the decision. */
async function atDeadline(
  rt: Runtime,
  window: MaintenanceWindow,
  p: DrainProgress,
  maintenanceId: string,
): Promise<RuntimeOutcome> {
  const runs = [...rt.active];
  const runsWithUnclassified = runs.filter((r) => r.unclassified > 0).length;
  const d = deadlineDecision(rt.policy, { ...p, runsWithUnclassified });
  const why = `the drain deadline of ${maintenanceId} passed with it dispatched but not acknowledged`;
  for (const run of runs) {
    let quarantined = false;
    for (const e of run.effects)
      if (e.state === EffectState.DISPATCHED)
        quarantined =
          (await quarantine(run, e.key, why, {
            runState: d.unclassifiedRuns,
            from: [EffectState.DISPATCHED],
          })) || quarantined;
    if (!quarantined && run.state === RunState.ACTIVE) {
      if (d.otherRuns === "suspended") await run.suspend(`drain deadline of ${maintenanceId}`);
      else
        await run.toReview(
          `the drain deadline of ${maintenanceId} passed (on_deadline: abort_and_review)`,
        );
    }
    run.abort(
      new QuiesceError(
        ErrorCode.RUN_SUSPENDED,
        `run ${run.id} stopped: the drain deadline of ${maintenanceId} passed`,
      ),
    );
  }
  const review = d.runtime === RuntimeState.NEEDS_REVIEW;
  await window.end({ maintenanceId, note: d.summary, review: review ? d.summary : null });
  rt.say(d.summary);
  if (!review) return stopped(rt, maintenanceId);
  await rt.lease
    .release(`runtime ${rt.id} needs review after ${maintenanceId}`)
    .catch(() => undefined);
  return { state: RuntimeState.NEEDS_REVIEW, leaseLost: false, reason: d.summary };
}
