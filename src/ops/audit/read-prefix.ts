import { closeSync, constants, openSync, readSync } from "node:fs";

/** Bytes read of a lock file: enough for a pid and a host name, never the file. */
export const LOCK_PREFIX_BYTES = 256;
/** Bytes read of a script, crontab or unit: lock idioms sit near the top of what is read. */
export const SCRIPT_PREFIX_BYTES = 64 * 1024;

/**
 * The first `bytes` of a file, never following a symlink (a link swapped in after the walk
 * saw a file is refused, not read) and never blocking on a FIFO. Throws the errno error.
 */
export function readPrefix(path: string, bytes: number): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const buf = Buffer.alloc(bytes);
    const n = readSync(fd, buf, 0, bytes, 0);
    return buf.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** Why a path was skipped, as a note: `cannot be read (permission denied)`. */
export function unreadable(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code ?? "";
  const why: Record<string, string> = {
    EACCES: "permission denied",
    EPERM: "operation not permitted",
    ELOOP: "it became a symlink",
    ENOENT: "it disappeared during the audit",
  };
  return `cannot be read (${why[code] ?? (e as Error).message}); skipped`;
}
