import { performance } from "node:perf_hooks";

/** One operation under measurement; may be synchronous (better-sqlite3) or not. */
export type Op = () => void | Promise<void>;

export interface LoopResult {
  n: number;
  ms: number;
}

/** Runs `op` back to back for about `ms` milliseconds; counts completed runs. */
export async function runFor(ms: number, op: Op): Promise<LoopResult> {
  const start = performance.now();
  let n = 0;
  let now = start;
  while (now - start < ms) {
    const r = op();
    if (r) await r;
    n++;
    now = performance.now();
  }
  return { n, ms: now - start };
}

/** Runs `op` exactly `n` times. */
export async function runTimes(n: number, op: Op): Promise<LoopResult> {
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const r = op();
    if (r) await r;
  }
  return { n, ms: performance.now() - start };
}

/** Wall-clock epoch ms with sub-ms resolution, comparable across processes of one host. */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
