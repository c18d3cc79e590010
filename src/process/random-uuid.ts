import type * as NodeCrypto from "node:crypto";
import { closeSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";

/**
 * Random bytes from the kernel's generator, as node:crypto takes them, read a block at a time.
 * Run ids need one UUID per `quiesce run`, and loading node:crypto for it alone cost about 4 ms
 * of that command's start-up (bench/startup.ts). Reading /dev/urandom costs three system calls
 * (open, read, close), which a process making many ids (a wave agent, one per host; the
 * lease-cycle bench, one per acquisition) paid every time: 512 bytes cover 32 ids. Where there
 * is no /dev/urandom, node:crypto it is.
 */
const POOL_BYTES = 512;
let pool: Buffer | null = null;
let used = POOL_BYTES;

/** `n` (at most POOL_BYTES) fresh random bytes, copied into `into` at `at`. */
function randomInto(into: Buffer, at: number, n: number): void {
  if (used + n > POOL_BYTES) {
    pool ??= Buffer.allocUnsafe(POOL_BYTES);
    if (!fillFromUrandom(pool)) {
      const crypto = createRequire(import.meta.url)("node:crypto") as typeof NodeCrypto;
      crypto.randomFillSync(pool);
    }
    used = 0;
  }
  pool!.copy(into, at, used, used + n);
  // Each byte is handed out once: what is copied is overwritten with the next fill.
  used += n;
}

function canonical(bytes: Buffer): string {
  const h = bytes.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A random (version 4) UUID: 122 random bits. */
export function randomUuid(): string {
  const bytes = Buffer.alloc(16);
  randomInto(bytes, 0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // variant 10 (RFC 9562)
  return canonical(bytes);
}

let lastMs = -1;
let lastSeq = 0;

/**
 * A time-ordered (version 7, RFC 9562) UUID: 48 bits of Unix milliseconds, a 12-bit sequence
 * that keeps ids of the same millisecond in this process in order (method 1 of the RFC: it
 * starts at a random value below 2048, so it rarely runs over; if it does, the next
 * millisecond's ids continue from the last one), then 62 random bits.
 *
 * Why run ids are time-ordered: every event, run and effect row is indexed by its run id. With
 * random ids each insert landed on a random leaf of those indexes, which SQLite had to read and
 * write back at every commit: Leases.acquire+release on disk, 3,300 cycles into a fresh store,
 * read 1.7 pages a cycle (0.37 with these ids, 0.34 for the bench's raw SQL with one fixed id)
 * and took 335-375 us against 220-265 us. Ids that grow with time append at the right edge of
 * the index, as the event ids do.
 *
 * `nowMs` is the wall clock: only the order of ids depends on it, never a lease.
 */
export function timeOrderedUuid(nowMs: number = Date.now()): string {
  let ms = Math.max(0, Math.floor(nowMs));
  const bytes = Buffer.alloc(16);
  randomInto(bytes, 6, 10);
  if (ms > lastMs) {
    lastSeq = ((bytes[6]! & 0x07) << 8) | bytes[7]!; // below 2048: room to count up
  } else {
    // The same millisecond, or the clock stepped back: count on from the last id.
    ms = lastMs;
    lastSeq++;
    if (lastSeq > 0xfff) {
      ms++;
      lastSeq = 0;
    }
  }
  lastMs = ms;
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (lastSeq >> 8); // version 7
  bytes[7] = lastSeq & 0xff;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // variant 10
  return canonical(bytes);
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
