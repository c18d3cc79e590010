import { readdirSync, readFileSync } from "node:fs";

import type { LeaseRecord } from "../../domain/lease.js";
import type { ProbeResult } from "../../domain/probe.js";
import { localProcessVerdict, type ProcessFacts } from "../../domain/probe-verdicts.js";
import { hostIdentity, processStartTime } from "../../process/process-identity.js";

/** Looks up the lease's holder and wrapped command on this host (Linux /proc; kill -0 elsewhere). */
export function probeLocalProcess(lease: LeaseRecord, relinquished: boolean): ProbeResult {
  const id = hostIdentity();
  const o = lease.owner;
  const sameHost = o.host === id.host;
  return localProcessVerdict({
    owner: o,
    thisHost: id.host,
    thisBootId: id.bootId,
    holder: sameHost && o.pid !== null ? facts(o.pid, o.pidStart) : null,
    child: sameHost && o.childPid !== null ? facts(o.childPid, o.childPidStart) : null,
    relinquished,
    runProcesses: sameHost ? processesOfRun(o.runId) : [],
  });
}

/**
 * Pids whose environment says QUIESCE_RUN_ID=<runId> (Linux /proc; empty elsewhere or where
 * we may not read it). Catches a command's children that left its process group, and a
 * command whose pid the holder died before recording.
 */
function processesOfRun(runId: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const needle = Buffer.from(`\0QUIESCE_RUN_ID=${runId}\0`);
  const first = Buffer.from(`QUIESCE_RUN_ID=${runId}\0`);
  const out: number[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;

    try {
      const env = readFileSync(`/proc/${name}/environ`);
      if (env.includes(needle) || env.subarray(0, first.length).equals(first)) {
        if (processState(Number(name)) !== "Z") out.push(Number(name));
      }
    } catch {
      /* gone, or not ours to read */
    }
  }
  return out;
}

function facts(pid: number, recordedStart: string | null): ProcessFacts {
  return {
    pid,
    recordedStart,
    exists: exists(pid),
    currentStart: processStartTime(pid),
    state: processState(pid),
  };
}

function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? null;
  } catch {
    return null;
  }
}
