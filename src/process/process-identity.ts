import { readFileSync } from "node:fs";
import { hostname } from "node:os";

/**
 * Facts that let a later reader tell whether a lease's owner is still the same process: the
 * host, the boot (a reboot kills every holder), and the pid with its start time (a pid alone
 * can be reused by an unrelated process). Linux-specific parts return null elsewhere.
 */
export interface HostIdentity {
  host: string;
  bootId: string | null;
}

let cached: HostIdentity | undefined;

/** Read once per process: both are asked for on every acquisition and every probe, and a
 * process keeps one identity for its whole life (a rename mid-run would confuse readers). */
export function hostIdentity(): HostIdentity {
  if (cached === undefined) {
    let bootId: string | null;
    try {
      bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    } catch {
      bootId = null;
    }
    cached = { host: hostname(), bootId };
  }
  return cached;
}

let ownStart: string | null | undefined;

/** The process's start time in clock ticks since boot (field 22 of /proc/PID/stat), or null. */
export function processStartTime(pid: number): string | null {
  // Our own start time never changes; every acquisition asks for it.
  if (pid === process.pid) return (ownStart ??= readStartTime(pid));
  return readStartTime(pid);
}

function readStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may itself contain spaces or ')'.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return rest[19] ?? null; // fields 3.. start at index 0, so field 22 is index 19
  } catch {
    return null;
  }
}
