import { formatDuration } from "./duration.js";

/**
 * Legacy locks (`quiesce audit`): lock files, pid files, maintenance flags and mkdir-style lock
 * directories that other tools leave on a host. Pure rules: what counts as one, the pid it
 * names, and whether it is live, stale or unknown. The scanner (src/ops/audit) gathers the
 * facts and passes them in, with `now`.
 */
export const LockKind = {
  LOCK: "lock",
  PID: "pid",
  FLAG: "flag",
  LOCK_DIR: "lock-dir",
} as const;
export type LockKind = (typeof LockKind)[keyof typeof LockKind];

export const Verdict = { LIVE: "live", STALE: "stale", UNKNOWN: "unknown" } as const;
export type Verdict = (typeof Verdict)[keyof typeof Verdict];

const LOCK_NAME = /(\.lock|\.lck)$|^LOCK$|^lock$/i;
const PID_NAME = /\.pid$/i;
const FLAG_NAME = /maintenance|\.flag$/i;

/** The kind of a directory entry by its name, or null when it is not lock-like. */
export function lockKindOf(name: string, isDirectory: boolean): LockKind | null {
  if (isDirectory) return LOCK_NAME.test(name) ? LockKind.LOCK_DIR : null;
  if (PID_NAME.test(name)) return LockKind.PID;
  if (LOCK_NAME.test(name)) return LockKind.LOCK;
  if (FLAG_NAME.test(name)) return LockKind.FLAG;
  return null;
}

/** Linux's pid_max ceiling (2^22). */
const MAX_PID = 4_194_304;

/**
 * The pid a file names: the first line's leading number (`4121`, `4121\n`, ` 4121 db-7`,
 * `pid=4121`). Anything else (empty, text, a number out of range) names none.
 */
export function pidFromText(prefix: string): number | null {
  const first = prefix.split("\n", 1)[0] ?? "";
  const m = /^\s*(?:pid\s*[=:]\s*)?(\d{1,7})(?:\s|$)/i.exec(first);
  if (!m) return null;
  const pid = Number(m[1]);
  return pid >= 1 && pid <= MAX_PID ? pid : null;
}

/** A process as seen in /proc: gone, or alive since `startedAt` (null: not readable). */
export type PidFacts = { alive: false } | { alive: true; startedAt: number | null };

/** What holds the file per /proc/locks (flock, POSIX fcntl or open-file-description lock). */
export interface LockHolder {
  type: "FLOCK" | "POSIX" | "OFDLCK" | "LEASE";
  /** -1 for OFD locks, which belong to an open file, not a process. */
  pid: number;
}

export interface LockFacts {
  kind: LockKind;
  /** Last modification, epoch ms. */
  mtimeMs: number;
  pid: number | null;
  /** Known when `pid` is set. */
  process: PidFacts | null;
  holder: LockHolder | null;
}

export interface LockJudgement {
  verdict: Verdict;
  /** One sentence a person can check. */
  evidence: string;
}

/**
 * Start times come from clock ticks since boot plus the boot time, which /proc gives to the
 * second: a process that wrote its pid file at once can look up to ~1 s younger than it.
 */
export const START_TOLERANCE_MS = 2000;

/**
 * live: held per /proc/locks (whatever it contains), or its pid runs and started before the
 * file was written; stale: its pid is gone, or was reused by a process started after the file
 * was written; unknown: nothing names an owner (a flag nobody holds), with its age.
 */
export function judgeLock(f: LockFacts, now: number): LockJudgement {
  const age = formatDuration(Math.max(0, now - f.mtimeMs));
  if (f.holder) {
    const by = f.holder.pid > 0 ? `process ${f.holder.pid}` : "an open file description";
    return {
      verdict: Verdict.LIVE,
      evidence: `held with ${holderName(f.holder.type)} by ${by} (per /proc/locks)`,
    };
  }
  if (f.pid !== null && f.process) {
    if (!f.process.alive)
      return {
        verdict: Verdict.STALE,
        evidence: `pid ${f.pid} is not running (written ${age} ago)`,
      };
    const started = f.process.startedAt;
    if (started === null)
      return {
        verdict: Verdict.LIVE,
        evidence: `pid ${f.pid} is running (its start time could not be read)`,
      };
    if (started > f.mtimeMs + START_TOLERANCE_MS)
      return {
        verdict: Verdict.STALE,
        evidence: `pid ${f.pid} was reused: that process started ${formatDuration(started - f.mtimeMs)} after the file was written`,
      };
    return {
      verdict: Verdict.LIVE,
      evidence: `pid ${f.pid} is running and started before the file was written`,
    };
  }
  const what = f.kind === LockKind.LOCK_DIR ? "directory" : "file";
  return {
    verdict: Verdict.UNKNOWN,
    evidence: `no pid inside and no process holds it; the ${what} is ${age} old`,
  };
}

function holderName(t: LockHolder["type"]): string {
  switch (t) {
    case "FLOCK":
      return "flock";
    case "POSIX":
      return "an fcntl lock";
    case "OFDLCK":
      return "an open-file-description fcntl lock";
    case "LEASE":
      return "a file lease";
  }
}

/** An accepted lock does not fail the audit; a live one never did. */
export function failsAudit(verdict: Verdict, accepted: boolean): boolean {
  return !accepted && verdict !== Verdict.LIVE;
}
