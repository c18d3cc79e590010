import { EventKind, type EventInput } from "../domain/event.js";
import { isHostState, isWaveState } from "../domain/wave-state.js";
import type { WaveHostRecord, WaveHostSummary, WaveRecord, WaveWrite } from "./wave-store.js";

/** Both backends select waves and hosts under these names, times as epoch ms. */
export interface WaveRow {
  name: string;
  host_count: number | string;
  batch_spec: string;
  batch_size: number | string;
  failure_spec: string;
  max_failures: number | string;
  time_window: string | null;
  max_per_group: number | string | null;
  state: string;
  reason: string | null;
  token: number | string | null;
  settings: string | null;
  created_at: number | string;
  started_at: number | string | null;
  finished_at: number | string | null;
  updated_at: number | string;
}

export interface WaveHostRow {
  wave: string;
  host: string;
  ordinal: number | string;
  grp: string | null;
  state: string;
  attempts: number | string;
  run_id: string | null;
  token: number | string | null;
  reason: string | null;
  detail: string | null;
  started_at: number | string | null;
  finished_at: number | string | null;
  updated_at: number | string;
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

export function waveFromRow(r: WaveRow): WaveRecord {
  if (!isWaveState(r.state)) throw new Error(`wave ${r.name} has an unknown state "${r.state}"`);
  return {
    name: r.name,
    hostCount: Number(r.host_count),
    batchSpec: r.batch_spec,
    batchSize: Number(r.batch_size),
    failureSpec: r.failure_spec,
    maxFailures: Number(r.max_failures),
    window: r.time_window,
    maxPerGroup: num(r.max_per_group),
    state: r.state,
    reason: r.reason,
    token: num(r.token),
    settings: r.settings,
    createdAt: Number(r.created_at),
    startedAt: num(r.started_at),
    finishedAt: num(r.finished_at),
    updatedAt: Number(r.updated_at),
  };
}

export function hostFromRow(r: WaveHostRow): WaveHostRecord {
  return {
    wave: r.wave,
    ordinal: Number(r.ordinal),
    token: num(r.token),
    updatedAt: Number(r.updated_at),
    ...hostSummaryFromRow(r.wave, r),
  };
}

/** A host row as listHostSummaries reads it (HOST_SUMMARY_COLUMNS on PostgreSQL). */
export type WaveHostSummaryRow = Pick<
  WaveHostRow,
  | "host"
  | "grp"
  | "state"
  | "attempts"
  | "run_id"
  | "reason"
  | "detail"
  | "started_at"
  | "finished_at"
>;

export function hostSummaryFromRow(wave: string, r: WaveHostSummaryRow): WaveHostSummary {
  if (!isHostState(r.state))
    throw new Error(`host ${r.host} of wave ${wave} has an unknown state "${r.state}"`);
  return {
    host: r.host,
    group: r.grp,
    state: r.state,
    attempts: Number(r.attempts),
    runId: r.run_id,
    reason: r.reason,
    detail: r.detail,
    startedAt: num(r.started_at),
    finishedAt: num(r.finished_at),
  };
}

/** The event a refused wave write leaves: a zombie agent tried to write (I3). */
export function waveFencedEvent(w: WaveWrite, scope: string, reason: string): EventInput {
  const what =
    w.kind === "host" ? `host ${w.host} ${w.from} -> ${w.to}` : `wave ${w.from} -> ${w.to}`;
  return {
    kind: EventKind.FencedWriteRejected,
    scope,
    token: w.token,
    runId: null,
    host: null,
    pid: null,
    message: `wave write (${what}) of wave ${w.wave} with token ${w.token} refused: ${reason.replace("_", " ")}`,
    detail: { reason, write: w.kind, wave: w.wave, ...(w.kind === "host" ? { host: w.host } : {}) },
  };
}

/** The event, with the retried hosts in its detail. */
export function withHosts(e: EventInput, hosts: readonly string[]): EventInput {
  return {
    ...e,
    message: `${e.message}: ${hosts.join(", ")}`,
    detail: { ...(e.detail ?? {}), hosts },
  };
}
