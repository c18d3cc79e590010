import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { judgeLock, LockKind, pidFromText, type LockJudgement } from "../../domain/legacy-lock.js";
import { devMajorMinor, inodeKey } from "../../domain/proc-locks.js";
import type { ProcFacts } from "./process-facts.js";
import { LOCK_PREFIX_BYTES, readPrefix } from "./read-prefix.js";
import type { Found } from "./walk.js";

export interface InspectedLock extends LockJudgement {
  pid: number | null;
}

/** Names of the file a mkdir-style lock directory may keep its owner's pid in. */
const PID_FILE = /^(pid|.*\.pid)$/;

/**
 * Gathers a lock's facts (the pid in its first bytes, the process behind it, a holder in
 * /proc/locks for its inode) and judges it. Throws the errno error of a file it cannot read.
 */
export function inspectLock(
  f: Extract<Found, { type: "lock" }>,
  proc: ProcFacts,
  now: number,
): InspectedLock {
  const text =
    f.kind === LockKind.LOCK_DIR ? pidFileIn(f.real) : readPrefix(f.real, LOCK_PREFIX_BYTES);
  const pid = text === null ? null : pidFromText(text);
  const st = lstatSync(f.real, { bigint: true });
  const { major, minor } = devMajorMinor(st.dev);
  const holder = proc.heldLocks().get(inodeKey(major, minor, st.ino)) ?? null;
  const judged = judgeLock(
    {
      kind: f.kind,
      mtimeMs: f.stat.mtimeMs,
      pid,
      process: pid === null ? null : proc.pid(pid),
      holder,
    },
    now,
  );
  return { ...judged, pid };
}

/** The first bytes of `pid` (or `*.pid`) inside a lock directory, or null when it has none. */
function pidFileIn(dir: string): string | null {
  const name = readdirSync(dir).find((n) => PID_FILE.test(n));
  if (name === undefined) return null;
  const p = join(dir, name);
  return lstatSync(p).isFile() ? readPrefix(p, LOCK_PREFIX_BYTES) : null;
}
