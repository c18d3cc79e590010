import { formatDuration } from "../domain/duration.js";
import { ErrorCode, QuiesceError, invalidInput } from "../domain/errors.js";
import { validateMaintenanceId } from "../domain/journal-names.js";
import { validateWaveName, waveRuntimeId, waveScope } from "../domain/wave-input.js";
import { WaveState } from "../domain/wave-state.js";
import { sleep } from "../process/clock.js";
import { startMaintenance, type MaintenanceStart } from "../runtime/maintenance.js";
import type { Store } from "../store/store.js";

export interface StopWaveInput {
  wave: string;
  /** The maintenance id the stop is recorded under (default `wave-stop-<time>`). */
  maintenanceId?: string;
  /** How long the hosts in flight get to finish (default: the agent's --drain-timeout). */
  drainTimeoutMs?: number | null;
  by: string;
}

/**
 * `quiesce wave stop NAME`: the maintenance-window protocol (src/runtime) on the wave's agent.
 * It writes a request on the agent's runtime record (`wave:NAME`); the agent notices within a
 * second, starts no new host, lets the hosts in flight finish (until the drain deadline),
 * records every host's state and the wave's `stopped`, and releases its leases.
 */
export async function stopWave(
  store: Store,
  i: StopWaveInput,
): Promise<MaintenanceStart | { status: "never_run"; message: string }> {
  validateWaveName(i.wave);
  const maintenanceId = validateMaintenanceId(i.maintenanceId ?? `wave-stop-${Date.now()}`, "--id");
  const { wave } = await store.waves.getWave(i.wave);
  if (!wave) throw invalidInput(`no wave named ${i.wave} (quiesce wave status lists the waves)`);
  const { runtime } = await store.journal.getRuntime(waveRuntimeId(i.wave));
  if (!runtime)
    return { status: "never_run", message: `wave ${i.wave} has never run: nothing to stop` };
  return startMaintenance(store, {
    runtimeId: waveRuntimeId(i.wave),
    maintenanceId,
    drainTimeoutMs: i.drainTimeoutMs ?? null,
    by: i.by,
  });
}

/**
 * Waits until no agent runs the wave any more (its lease released or expired) and returns the
 * wave's record: `stopped` after a stop, or whatever the agent reached first.
 */
export async function waitForWaveStop(
  store: Store,
  wave: string,
  timeoutMs: number,
  everyMs = 100,
) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const [{ wave: w }, { lease, now }] = await Promise.all([
      store.waves.getWave(wave),
      store.leases.getLease(waveScope(wave)),
    ]);
    if (!w) throw invalidInput(`no wave named ${wave}`);
    if (w.state !== WaveState.RUNNING || lease === null || lease.expiresAt <= now) return w;
    if (Date.now() > end)
      throw new QuiesceError(
        ErrorCode.STORE_UNAVAILABLE,
        `wave ${wave} did not stop within ${formatDuration(timeoutMs)} (its hosts in flight are still finishing)`,
      );
    await sleep(everyMs);
  }
}
