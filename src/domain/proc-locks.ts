import type { LockHolder } from "./legacy-lock.js";

/**
 * /proc/locks, parsed: which inode is held, by what kind of lock and which process. A line is
 * `1: FLOCK  ADVISORY  WRITE 4121 08:01:393267 0 EOF`; waiters (`1: -> FLOCK ...`) hold nothing
 * and are skipped. The device is `major:minor` in hex, the inode in decimal.
 */
export type ProcLocks = ReadonlyMap<string, LockHolder>;

const TYPES = new Set<LockHolder["type"]>(["FLOCK", "POSIX", "OFDLCK", "LEASE"]);

export function parseProcLocks(text: string): ProcLocks {
  const out = new Map<string, LockHolder>();
  for (const line of text.split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f.length < 6 || f[1] === "->") continue;
    const type = f[1] as LockHolder["type"];
    if (!TYPES.has(type)) continue;
    const pid = Number(f[4]);
    const m = /^([0-9a-f]+):([0-9a-f]+):(\d+)$/i.exec(f[5] ?? "");
    if (!m || !Number.isInteger(pid)) continue;
    const key = inodeKey(parseInt(m[1]!, 16), parseInt(m[2]!, 16), m[3]!);
    if (!out.has(key)) out.set(key, { type, pid });
  }
  return out;
}

export function inodeKey(major: number, minor: number, ino: string | number | bigint): string {
  return `${major}:${minor}:${String(ino)}`;
}

/** glibc's gnu_dev_major/minor of a stat `dev` (given as a bigint so no bit is lost). */
export function devMajorMinor(dev: bigint): { major: number; minor: number } {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return { major: Number(major), minor: Number(minor) };
}
