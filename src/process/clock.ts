import type { ClockReading } from "../domain/self-fencing.js";

/**
 * Monotonic milliseconds: the clock performance.now() reads (CLOCK_MONOTONIC), from another
 * origin, so only differences within one process mean anything. Read through process.hrtime
 * because node's `performance` loads ten modules of its own on first use, about 0.6 ms of
 * every `quiesce run` (bench/startup.ts).
 */
export function monoMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Both local clocks at once: monotonic for elapsed time, wall to notice a suspend (I4). */
export function readClock(): ClockReading {
  return { mono: monoMs(), wall: Date.now() };
}

/** A sleep that ends early, with the signal's reason, when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
