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

export interface IdleFsync {
  pauseMs: number;
  /** An fsync after the disk sat idle `pauseMs`, µs. */
  idleMedianUs: number;
  idleP90Us: number;
  /** Back to back (the fourth fsync in a row), µs. */
  hotMedianUs: number;
}

/**
 * What one durable write costs after the disk sat idle `pauseMs`, against back to back. A
 * contended scope's handoff commits right after the holder's hold, a stretch with no writes:
 * on the VMs here that first fsync costs several times a warm one, and it bounds the fairness
 * bench whatever the code does.
 */
export async function probeIdleFsync(dir: string, pauseMs: number, n = 200): Promise<IdleFsync> {
  const probe = openFsyncProbe(dir);
  const timed = () => {
    const t = performance.now();
    probe.op();
    return (performance.now() - t) * 1000;
  };
  try {
    const idle: number[] = [];
    const hot: number[] = [];
    for (let i = 0; i < n; i++) {
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      idle.push(timed());
      // Warm again by the fourth in a row.
      for (let k = 0; k < 3; k++) timed();
      hot.push(timed());
    }
    const at = (xs: number[], q: number) =>
      xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
    return {
      pauseMs,
      idleMedianUs: at(idle, 0.5),
      idleP90Us: at(idle, 0.9),
      hotMedianUs: at(hot, 0.5),
    };
  } finally {
    probe.close();
  }
}
