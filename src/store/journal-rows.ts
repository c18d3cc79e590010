import type { EffectState } from "../domain/effect-state.js";
import type { EffectRecord, RunRecord, RunState } from "../domain/journal-record.js";
import type { MaintenancePolicy } from "../domain/maintenance-policy.js";
import type { RuntimeRecord } from "../domain/runtime-record.js";
import type { RuntimeState } from "../domain/runtime-state.js";

/**
 * Both backends select journal rows under these column names, times as epoch ms, so one
 * mapping serves both. JSON columns are text on both (never jsonb): the checksum is over the
 * exact text written.
 */
export interface RunRow {
  run_id: string;
  runtime_id: string;
  scope: string;
  state: string;
  seq: number;
  token: number;
  checkpoint: string | null;
  review_reason: string | null;
  created_at: number;
  updated_at: number;
}

export function runFromRow(r: RunRow): RunRecord {
  return {
    runId: r.run_id,
    runtimeId: r.runtime_id,
    scope: r.scope,
    state: r.state as RunState,
    seq: Number(r.seq),
    token: Number(r.token),
    checkpoint: r.checkpoint,
    reviewReason: r.review_reason,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

export interface EffectRow {
  run_id: string;
  key: string;
  ordinal: number;
  provider: string;
  state: string;
  prev_state: string | null;
  seq: number;
  attempt: number;
  token: number;
  request: string;
  request_id: string | null;
  result: string | null;
  context: string | null;
  review_reason: string | null;
  checksum: string;
  created_at: number;
  updated_at: number;
}

export function effectFromRow(r: EffectRow): EffectRecord {
  return {
    runId: r.run_id,
    key: r.key,
    ordinal: Number(r.ordinal),
    provider: r.provider,
    state: r.state as EffectState,
    prevState: r.prev_state as EffectState | null,
    seq: Number(r.seq),
    attempt: Number(r.attempt),
    token: Number(r.token),
    request: r.request,
    requestId: r.request_id,
    result: r.result,
    context: r.context,
    reviewReason: r.review_reason,
    checksum: r.checksum,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

export interface RuntimeRow {
  runtime_id: string;
  scope: string;
  state: string;
  version: number;
  incarnation: string;
  token: number;
  host: string | null;
  pid: number | null;
  maintenance_id: string | null;
  accepting_work: number | boolean;
  active_runs: number;
  started_at: number;
  deadline_at: number | null;
  policy: string;
  note: string | null;
  review_reason: string | null;
  updated_at: number;
  req_maintenance_id: string | null;
  req_drain_ms: number | null;
  req_at: number | null;
  req_by: string | null;
}

export function runtimeFromRow(r: RuntimeRow): RuntimeRecord {
  return {
    runtimeId: r.runtime_id,
    scope: r.scope,
    state: r.state as RuntimeState,
    version: Number(r.version),
    incarnation: r.incarnation,
    token: Number(r.token),
    host: r.host,
    pid: r.pid,
    maintenanceId: r.maintenance_id,
    acceptingWork: Boolean(r.accepting_work),
    activeRuns: Number(r.active_runs),
    startedAt: Number(r.started_at),
    deadlineAt: r.deadline_at === null ? null : Number(r.deadline_at),
    policy: JSON.parse(r.policy) as MaintenancePolicy,
    note: r.note,
    reviewReason: r.review_reason,
    updatedAt: Number(r.updated_at),
    request:
      r.req_maintenance_id === null
        ? null
        : {
            maintenanceId: r.req_maintenance_id,
            drainTimeoutMs: r.req_drain_ms === null ? null : Number(r.req_drain_ms),
            at: Number(r.req_at),
            by: r.req_by ?? "",
          },
  };
}

/** Whether a runtime in `state` takes a maintenance request (and why not). */
export function requestRefusal(
  rt: RuntimeRecord,
  maintenanceId: string,
): "not_running" | "busy" | "repeated" | null {
  if (rt.state === "DRAINING") return rt.maintenanceId === maintenanceId ? "repeated" : "busy";
  if (rt.state !== "RUNNING") return "not_running";
  if (rt.request === null) return null;
  return rt.request.maintenanceId === maintenanceId ? "repeated" : "busy";
}
