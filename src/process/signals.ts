import { readdirSync, readFileSync } from "node:fs";
import { constants } from "node:os";

/** The number of a signal (SIGTERM -> 15); 0 for one the platform does not know. */
export function signalNumber(sig: NodeJS.Signals): number {
  return constants.signals[sig] ?? 0;
}

/** A shell's view of how a process ended: its code, or 128 + the signal that killed it. */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (signal !== null) return 128 + signalNumber(signal);
  return code ?? 1;
}

/**
 * Signals a whole process group (every process whose pgid is `pgid`). False when no process
 * of the group is left (ESRCH), true otherwise: a group whose only member is a zombie still
 * "receives" signals.
 */
export function signalGroup(pgid: number | undefined, sig: NodeJS.Signals | 0): boolean {
  if (pgid === undefined || pgid <= 0) return false;
  try {
    if (process.platform === "win32") process.kill(pgid, sig);
    else process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * Live members of a process group, read from /proc (Linux): the processes a command left
 * behind when its leader is gone. Zombies are left out: they act no more. Empty elsewhere.
 */
export function groupMembers(pgid: number): number[] {
  // No process at all in the group (the common end of `run`): one kill(2) says so, where the
  // scan below reads every process's stat file.
  if (pgid > 0 && !groupExists(pgid)) return [];
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const name of names) {
    if (name.charCodeAt(0) > 57) continue; // not a pid directory
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // fields 3 (state) and 5 (pgrp) are at indexes 0 and 2
      if (f[0] !== "Z" && Number(f[2]) === pgid) out.push(Number(name));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** False only when the kernel says no process has that group id (ESRCH); EPERM means one has. */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** Resolves when no process is left in the group (polled), or at `untilMs` (epoch ms). */
export async function groupGone(pgid: number, untilMs: number, pollMs = 25): Promise<boolean> {
  for (;;) {
    if (process.platform === "linux" ? groupMembers(pgid).length === 0 : !signalGroup(pgid, 0))
      return true;
    if (Date.now() >= untilMs) return false;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** True when `pid` has exited but was not reaped yet (a zombie): it acts no more. Linux. */
export function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.charAt(stat.lastIndexOf(")") + 2) === "Z";
  } catch {
    return false;
  }
}
