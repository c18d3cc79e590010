import { readFileSync } from "node:fs";
import type { LeaseRecord } from "../../domain/lease.js";
import type { ProbeResult } from "../../domain/probe.js";
import { localProcessVerdict, type ProcessFacts } from "../../domain/probe-verdicts.js";
import { hostIdentity, processStartTime } from "../process-identity.js";

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
  });
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
