import { invalidInput } from "../domain/errors.js";
import { leaseStatus } from "../domain/lease.js";
import { estimateEta } from "../domain/wave-eta.js";
import { patchKey, validateWaveName, waveRuntimeId, waveScope } from "../domain/wave-input.js";
import { remainingHosts } from "../domain/wave-plan.js";
import { countHosts, HostState, WaveState, type HostCounts } from "../domain/wave-state.js";
import { parseWindow } from "../domain/wave-window.js";
import type { Store } from "../store/store.js";
import type { WaveHostSummary } from "../store/wave-store.js";
import type { StoredSettings } from "./run-options.js";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export interface WaveHostView {
  host: string;
  group: string | null;
  state: HostState;
  attempts: number;
  reason: string | null;
  detail: unknown;
  runId: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
}

/**
 * `wave status NAME`: every host's state, the counts, the failures against the budget, who
 * holds the wave now (live or a dead agent's expired lease), the agent's runtime record, the
 * ETA while it runs, and what a human must resolve. Times are on the store's clock.
 */
export async function waveStatus(store: Store, name: string) {
  validateWaveName(name);
  const [{ wave, now }, hosts, { lease }, { runtime }] = await Promise.all([
    store.waves.getWave(name),
    store.waves.listHostSummaries(name),
    store.leases.getLease(waveScope(name)),
    store.journal.getRuntime(waveRuntimeId(name)),
  ]);
  if (!wave) throw invalidInput(`no wave named ${name} (quiesce wave status lists the waves)`);
  const counts: HostCounts = countHosts(hosts.map((h) => h.state));
  const settings = wave.settings ? (JSON.parse(wave.settings) as StoredSettings) : null;
  const live = lease !== null && !leaseStatus(lease, now).expired;
  const durations = hosts
    .filter((h) => h.finishedAt !== null && h.startedAt !== null)
    .map((h) => h.finishedAt! - h.startedAt!);
  const running = wave.state === WaveState.RUNNING && live;
  const parallel = Math.min(settings?.concurrency ?? wave.batchSize, wave.batchSize);
  const eta = running
    ? estimateEta({
        now,
        remaining: remainingHosts(counts),
        hostDurationsMs: durations,
        parallel,
        window: wave.window === null ? null : parseWindow(wave.window),
        offsetMin: new Date(now).getTimezoneOffset(),
      })
    : null;
  return {
    wave: {
      name: wave.name,
      state: wave.state,
      reason: wave.reason,
      hosts: wave.hostCount,
      batch: wave.batchSpec,
      batchSize: wave.batchSize,
      window: wave.window,
      maxPerGroup: wave.maxPerGroup,
      createdAt: iso(wave.createdAt),
      startedAt: iso(wave.startedAt),
      finishedAt: iso(wave.finishedAt),
      settings,
    },
    counts,
    budget: {
      spec: wave.failureSpec,
      maxFailures: wave.maxFailures,
      failed: counts.failed,
      left: wave.maxFailures - counts.failed,
      spent: counts.failed > wave.maxFailures,
    },
    holder: lease && {
      state: live ? ("live" as const) : ("expired" as const),
      token: lease.token,
      runId: lease.owner.runId,
      host: lease.owner.host,
      pid: lease.owner.pid,
      heartbeatAgeMs: now - lease.heartbeatAt,
      expiresInMs: lease.expiresAt - now,
      takenOverFrom: lease.takeover?.previous.owner.runId ?? null,
    },
    agent: runtime && {
      state: runtime.state,
      maintenanceId: runtime.maintenanceId,
      stopRequested: runtime.request?.maintenanceId ?? null,
      note: runtime.note,
    },
    eta: eta && { at: iso(eta.at), inMs: eta.inMs, basis: eta.basis },
    review: hosts
      .filter((h) => h.state === HostState.NEEDS_REVIEW && h.runId !== null)
      .map((h) => ({
        host: h.host,
        runId: h.runId!,
        resolve: `quiesce runs resolve ${h.runId} --effect ${patchKey(name, h.host)} --as observed|not-sent --reason "..."`,
      })),
    hosts: hosts.map(hostView),
    storeNow: new Date(now).toISOString(),
  };
}

export type WaveStatus = Awaited<ReturnType<typeof waveStatus>>;

function hostView(h: WaveHostSummary): WaveHostView {
  return {
    host: h.host,
    group: h.group,
    state: h.state,
    attempts: h.attempts,
    reason: h.reason,
    detail: h.detail === null ? null : (JSON.parse(h.detail) as unknown),
    runId: h.runId,
    startedAt: iso(h.startedAt),
    finishedAt: iso(h.finishedAt),
    durationMs: h.startedAt !== null && h.finishedAt !== null ? h.finishedAt - h.startedAt : null,
  };
}

/** `wave status` without a name: every wave with its counts. */
export async function listWaves(store: Store) {
  const { waves, now } = await store.waves.listWaves();
  return {
    waves: waves.map(({ wave, counts }) => ({
      name: wave.name,
      state: wave.state,
      reason: wave.reason,
      hosts: wave.hostCount,
      counts,
      createdAt: iso(wave.createdAt),
    })),
    storeNow: new Date(now).toISOString(),
  };
}
