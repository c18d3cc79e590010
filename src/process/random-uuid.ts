import type * as NodeCrypto from "node:crypto";
import { closeSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";

/**
 * A random (version 4) UUID, from the kernel's generator as node:crypto's randomUUID() takes
 * it. Run ids need one per `quiesce run`, and loading node:crypto for it alone cost about 4 ms
 * of that command's start-up (bench/startup.ts); reading 16 bytes of /dev/urandom costs three
 * system calls. Where there is no /dev/urandom, node:crypto it is.
 */
export function randomUuid(): string {
  const bytes = Buffer.alloc(16);
  if (!fillFromUrandom(bytes))
    return (createRequire(import.meta.url)("node:crypto") as typeof NodeCrypto).randomUUID();
  bytes[6] = (bytes[6]! & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // variant 10 (RFC 9562)
  const h = bytes.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function fillFromUrandom(bytes: Buffer): boolean {
  let fd: number;
  try {
    fd = openSync("/dev/urandom", "r");
  } catch {
    return false;
  }
  try {
    let filled = 0;
    while (filled < bytes.length) {
      const n = readSync(fd, bytes, filled, bytes.length - filled, null);
      if (n <= 0) return false;
      filled += n;
    }
    return true;
  } finally {
    closeSync(fd);
  }
}
