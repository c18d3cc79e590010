import { isTransientStoreError } from "../domain/errors.js";
import { readClock, sleep } from "../process/clock.js";

/**
 * Calls `fn`, retrying with backoff (100 ms doubling to 2 s) while it fails with a transient
 * store error (a dropped connection, a restarting server) and `untilMono` (monotonic ms) has
 * not passed. Any other error, or one past the deadline, is thrown.
 */
export async function retryTransient<T>(
  fn: () => Promise<T>,
  untilMono: number,
  signal?: AbortSignal,
): Promise<T> {
  let delay = 100;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      const left = untilMono - readClock().mono;
      if (!isTransientStoreError(e) || left <= 0) throw e;
      await sleep(Math.min(delay, left), signal);
      delay = Math.min(2000, delay * 2);
    }
  }
}
