import { performance } from "node:perf_hooks";
import type { ClockReading } from "../domain/self-fencing.js";

/** Both local clocks at once: monotonic for elapsed time, wall to notice a suspend (I4). */
export function readClock(): ClockReading {
  return { mono: performance.now(), wall: Date.now() };
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
