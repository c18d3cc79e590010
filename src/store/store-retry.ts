import { isTransientStoreError, isUnsentStoreError } from "../domain/errors.js";
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

/**
 * How long a request that could not be sent may be tried again: a lease (it has this method),
 * whose remaining validity bounds the retries. Past it the lease is lost, and a write made
 * under it would be refused anyway.
 */
export interface RetryBudget {
  remainingMs(): number;
}

/**
 * Calls `fn`, retrying with backoff (50 ms doubling to 1 s) while it fails before its request
 * reached the store (isUnsentStoreError: no connection could be made) and `budget` has time
 * left. Nothing was written by the failed attempt, so any request, also a write that is not
 * idempotent, may be sent again as it was; a failure that may have reached the store is
 * thrown at once. `onRetry` counts the retries.
 */
export async function retryUnsent<T>(
  fn: () => Promise<T>,
  budget: RetryBudget,
  o: { signal?: AbortSignal; onRetry?: () => void } = {},
): Promise<T> {
  for (let delay = 50; ; delay = Math.min(1000, delay * 2)) {
    try {
      return await fn();
    } catch (e) {
      const left = budget.remainingMs();
      if (!isUnsentStoreError(e) || left <= 0) throw e;
      o.onRetry?.();
      await sleep(Math.min(delay, left), o.signal);
    }
  }
}
