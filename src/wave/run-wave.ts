import { invalidInput } from "../domain/errors.js";
import { DEFAULT_POLICY } from "../domain/maintenance-policy.js";
import { waveScope } from "../domain/wave-input.js";
import { WaveState } from "../domain/wave-state.js";
import type { Leases, Refusal } from "../lease/leases.js";
import { resolveRunOptions, type WaveRunOptions } from "./run-options.js";
import { WaveAgent, type WaveHooks, type WaveRunResult } from "./wave-agent.js";
import { WaveControl } from "./wave-control.js";
import { WaveWriter } from "./wave-writer.js";

export type RunWaveResult = WaveRunResult & { refusal?: Refusal };

/**
 * Runs (or resumes) a wave in this process: takes the wave's lease (`wave:NAME`; an expired
 * one is taken over automatically once its owner is shown dead), records the agent's runtime
 * RUNNING, works through the hosts, records every host's state and the wave's, and releases.
 * A second agent on the same wave gets `not_acquired` (exit 75) at once unless it waits.
 *
 *     const r = await runWave(leases, { wave: "patch-06", patch: "ssh {host} sudo apt-get -y upgrade",
 *                                       check: "ssh {host} test -e /run/patched", concurrency: 4 });
 *
 * `onAgent` hands over the agent as soon as it runs (a live display polls `snapshot()`).
 */
export async function runWave(
  leases: Leases,
  o: WaveRunOptions,
  hooks: WaveHooks & { onAgent?(agent: WaveAgent): void } = {},
): Promise<RunWaveResult> {
  const store = leases.store;
  const found = await store.waves.getWave(o.wave);
  if (!found.wave)
    throw invalidInput(
      `no wave named ${o.wave} (create it with quiesce wave create ${o.wave} --hosts FILE)`,
    );
  const opts = resolveRunOptions(o, found.wave);
  const say = (line: string) => hooks.onMessage?.(line);
  if (found.wave.state === WaveState.COMPLETED)
    return {
      outcome: "completed",
      exitCode: 0,
      summary: `wave ${o.wave} is already completed (${found.wave.reason ?? "every host done"}): nothing to do`,
      counts: null,
      token: null,
    };
  const acquired = await leases.tryAcquire(waveScope(o.wave), {
    ttl: opts.ttlMs,
    ...(opts.heartbeatMs !== undefined ? { heartbeat: opts.heartbeatMs } : {}),
    wait: opts.waitMs,
    command: `quiesce wave run ${o.wave}`,
    note: `wave agent for ${o.wave}`,
    onWait: (p) => say(`waiting for the wave's lease: ${p.message}`),
  });
  if (!acquired.ok)
    return {
      outcome: "not_acquired",
      exitCode: 75,
      summary: `wave ${o.wave} is being run by another agent: ${acquired.message}`,
      counts: null,
      token: null,
      refusal: acquired,
    };
  const lease = acquired.lease;
  if (lease.record.takeover)
    say(
      `took the wave over from run ${lease.record.takeover.previous.owner.runId} (token ${lease.record.takeover.previous.token}): ${lease.record.takeover.summary}`,
    );
  let control: WaveControl | null = null;
  try {
    control = await WaveControl.start(store, lease, {
      wave: o.wave,
      policy: { ...DEFAULT_POLICY, drainTimeoutMs: opts.drainTimeoutMs },
      say,
      pollMs: opts.pollMs,
      signals: opts.signals,
      graceMs: opts.graceMs,
    });
    // Read again under the lease: another agent may have finished it meanwhile.
    const { wave } = await store.waves.getWave(o.wave);
    const writer = new WaveWriter(store, lease, wave!, await store.waves.listHosts(o.wave));
    if (wave!.state === WaveState.COMPLETED) {
      await control.finish(`wave ${o.wave} was already completed`, null);
      return {
        outcome: "completed",
        exitCode: 0,
        summary: `wave ${o.wave} is already completed: nothing to do`,
        counts: null,
        token: lease.token,
      };
    }
    const agent = new WaveAgent(leases, lease, writer, control, opts, hooks);
    hooks.onAgent?.(agent);
    return await agent.run();
  } finally {
    control?.close();
    await lease.release(`wave agent for ${o.wave} ended`).catch(() => undefined);
  }
}
