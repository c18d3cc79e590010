import { closeSync, fdatasyncSync, fsyncSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

export interface FsyncProbe {
  /** One durable write: overwrite the block, fdatasync. */
  op: () => void;
  close: () => void;
}

/**
 * The disk's durable-write rate: overwrite one 4 KiB block of a preallocated file and
 * fdatasync it. This is what a commit costs at best (PostgreSQL's WAL is such an overwrite +
 * fdatasync; SQLite's WAL append + fsync is no cheaper).
 */
export function openFsyncProbe(dir: string): FsyncProbe {
  const path = join(dir, `fsync-probe-${process.pid}.bin`);
  const block = Buffer.alloc(4096, 0x5a);
  const fd = openSync(path, "w");
  writeSync(fd, block, 0, block.length, 0);
  fsyncSync(fd);
  return {
    op: () => {
      writeSync(fd, block, 0, block.length, 0);
      fdatasyncSync(fd);
    },
    close: () => {
      closeSync(fd);
      rmSync(path, { force: true });
    },
  };
}

/** fsyncs per second over about `ms` milliseconds. */
export function probeFsyncRate(dir: string, ms: number): number {
  const probe = openFsyncProbe(dir);
  try {
    const start = performance.now();
    let n = 0;
    let now = start;
    while (now - start < ms) {
      probe.op();
      n++;
      now = performance.now();
    }
    return (n * 1000) / (now - start);
  } finally {
    probe.close();
  }
}
