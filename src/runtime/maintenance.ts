import { formatDuration } from "../domain/duration.js";
import { ErrorCode, QuiesceError, invalidInput } from "../domain/errors.js";
import { validateMaintenanceId, validateRuntimeId } from "../domain/journal-names.js";
import { RunState } from "../domain/journal-record.js";
import { leaseStatus, type LeaseRecord } from "../domain/lease.js";
import { policyToJson } from "../domain/maintenance-policy.js";
import type { RuntimeRecord } from "../domain/runtime-record.js";
import { RuntimeState } from "../domain/runtime-state.js";
import { sleep } from "../process/clock.js";
import type { Store } from "../store/store.js";

export type MaintenanceStart =
  | { status: "requested" | "repeated"; runtime: RuntimeRecord }
  /** Nothing runs to drain: stopped, quiesced, in review, or its process is gone. */
  | { status: "not_running"; runtime: RuntimeRecord; message: string };

/**
 * `quiesce maintenance start`: asks a running runtime to drain (it polls for the request and
 * notices within a second). A runtime whose process is gone (its lease expired or released)
 * has nothing to drain: its next start recovers it.
 */
export async function startMaintenance(
  store: Store,
  req: { runtimeId: string; maintenanceId: string; drainTimeoutMs: number | null; by: string },
): Promise<MaintenanceStart> {
  validateRuntimeId(req.runtimeId, "runtime");
  validateMaintenanceId(req.maintenanceId, "--id");
  const { runtime } = await store.journal.getRuntime(req.runtimeId);
  if (!runtime)
    throw invalidInput(`no runtime named ${req.runtimeId} (quiesce maintenance status lists them)`);
  // The record names the scope its process holds (`runtime:ID`, or `wave:NAME` for a wave's agent).
  const { lease, now } = await store.leases.getLease(runtime.scope);
  const live = lease !== null && !leaseStatus(lease, now).expired && lease.token === runtime.token;
  if (runtime.state === RuntimeState.RUNNING && !live)
    return {
      status: "not_running",
      runtime,
      message: `runtime ${req.runtimeId} is recorded RUNNING but its process is gone (${lease ? `its lease expired ${formatDuration(now - lease.expiresAt)} ago` : "its lease was released"}); its next start recovers it`,
    };
  const r = await store.journal.requestMaintenance(req);
  if (r.ok) return { status: r.repeated ? "repeated" : "requested", runtime: r.runtime };
  if (r.reason === "unknown_runtime") throw invalidInput(`no runtime named ${req.runtimeId}`);
  if (r.reason === "busy")
    throw new QuiesceError(
      ErrorCode.WORK_REFUSED,
      `runtime ${req.runtimeId} is already ${r.runtime!.state === RuntimeState.DRAINING ? "draining" : "asked to drain"} for ${r.runtime!.maintenanceId ?? r.runtime!.request?.maintenanceId}`,
    );
  return {
    status: "not_running",
    runtime: r.runtime!,
    message: `runtime ${req.runtimeId} is ${r.runtime!.state}: nothing to drain`,
  };
}

/** Waits until the runtime finished the drain of `maintenanceId` (STOPPED or NEEDS_REVIEW). */
export async function waitForMaintenance(
  store: Store,
  runtimeId: string,
  maintenanceId: string,
  timeoutMs: number,
  everyMs = 100,
): Promise<RuntimeRecord> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { runtime } = await store.journal.getRuntime(runtimeId);
    const done =
      runtime?.state === RuntimeState.STOPPED || runtime?.state === RuntimeState.NEEDS_REVIEW;
    if (runtime && done && runtime.maintenanceId === maintenanceId) return runtime;
    if (
      runtime &&
      runtime.state === RuntimeState.RUNNING &&
      runtime.request === null &&
      runtime.maintenanceId !== null &&
      runtime.maintenanceId !== maintenanceId
    )
      return runtime; // a new process started meanwhile
    if (Date.now() > end)
      throw new QuiesceError(
        ErrorCode.STORE_UNAVAILABLE,
        `runtime ${runtimeId} did not finish draining for ${maintenanceId} within ${formatDuration(timeoutMs)} (it is ${runtime?.state ?? "gone"})`,
      );
    await sleep(everyMs);
  }
}

/** A runtime as `maintenance status` shows it: the record, its lease, its runs right now. */
export async function runtimeStatus(store: Store, rt: RuntimeRecord) {
  const [{ lease, now }, active, review] = await Promise.all([
    store.leases.getLease(rt.scope),
    store.journal.listRuns({ runtimeId: rt.runtimeId, state: RunState.ACTIVE, limit: 10_000 }),
    store.journal.listRuns({
      runtimeId: rt.runtimeId,
      state: RunState.NEEDS_REVIEW,
      limit: 10_000,
    }),
  ]);
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    runtimeId: rt.runtimeId,
    state: rt.state,
    maintenanceId: rt.maintenanceId,
    acceptingWork: rt.acceptingWork,
    activeRuns: active.runs.length,
    activeRunsAtLastTransition: rt.activeRuns,
    runsNeedingReview: review.runs.length,
    startedAt: iso(rt.startedAt),
    deadlineAt: iso(rt.deadlineAt),
    updatedAt: iso(rt.updatedAt),
    policy: policyToJson(rt.policy),
    note: rt.note,
    reviewReason: rt.reviewReason,
    process: { incarnation: rt.incarnation, host: rt.host, pid: rt.pid, token: rt.token },
    lease: leaseView(lease, now, rt.token),
    pendingRequest: rt.request && { ...rt.request, at: iso(rt.request.at) },
    storeNow: iso(now),
  };
}

function leaseView(lease: LeaseRecord | null, now: number, token: number) {
  if (!lease) return { state: "free" as const };
  const s = leaseStatus(lease, now);
  return {
    state: s.expired ? ("expired" as const) : ("live" as const),
    token: lease.token,
    ours: lease.token === token,
    expiresInMs: s.expiresInMs,
  };
}
