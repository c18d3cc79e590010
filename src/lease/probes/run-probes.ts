import type { LeaseRecord } from "../../domain/lease.js";
import type { ProbeResult } from "../../domain/probe.js";
import { heartbeatProbe, runActivityProbe } from "../../domain/probe-verdicts.js";
import type { Store } from "../../store/store.js";
import { probeCommand } from "./command-probe.js";
import { probeLocalProcess } from "./local-process.js";

export interface ProbeConfig {
  /** A user command template, e.g. `ssh {host} kill -0 {pid}`; null: none configured. */
  command: string | null;
  commandTimeoutMs: number;
}

export interface ProbeRun {
  probes: ProbeResult[];
  /** Store clock of the owner's last sign of life: its heartbeat or its run's last activity. */
  lastSignAt: number;
}

/** Runs every probe that applies to `lease` and gathers their verdicts. */
export async function runProbes(
  store: Store,
  lease: LeaseRecord,
  storeNow: number,
  config: ProbeConfig,
): Promise<ProbeRun> {
  const [activity, command] = await Promise.all([
    store.leases.ownerActivity(lease.owner.runId, lease.scope, lease.token),
    config.command
      ? probeCommand(config.command, lease, config.commandTimeoutMs)
      : Promise.resolve(null),
  ]);
  const probes = [
    heartbeatProbe(lease, storeNow),
    probeLocalProcess(lease, activity.relinquishedAt !== null),
    runActivityProbe(lease, activity, storeNow),
  ];
  if (command) probes.push(command);
  return { probes, lastSignAt: Math.max(lease.heartbeatAt, activity.last?.at ?? 0) };
}
