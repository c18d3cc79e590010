import type { JournalResult, JournalWrite } from "./journal-store.js";
import { monoMs } from "../process/clock.js";
import { retryUnsent, type RetryBudget } from "./store-retry.js";

interface Pending<W, R> {
  write: W;
  resolve(r: R): void;
  reject(e: unknown): void;
}

/** Anything that applies a batch of writes in one commit, one result per write (the journal, the waves). */
export interface BatchApplier<W, R> {
  apply(writes: readonly W[]): Promise<R[]>;
}

/** Writes per commit at most; a bigger burst takes several commits. */
export const MAX_BATCH = 256;

/**
 * How long a lone writer may commit without giving the event loop a turn (ms): timers (the
 * lease heartbeat) and I/O wait at most about this long behind a run whose provider answers
 * at once.
 */
export const YIELD_EVERY_MS = 2;

/**
 * Group commit: journal writes that arrive while a commit is being prepared or is in flight
 * share the next commit (one fsync on SQLite, one WAL flush on PostgreSQL). A write's promise
 * resolves only after the commit that holds it returned, so "DISPATCHED is durable before the
 * request leaves" (I8) holds whatever the batching: the caller sends after it awaited the write.
 *
 * The first write waits one event-loop turn (setImmediate) so that writes issued in the same
 * turn (16 runs woken by one commit) go together; while a commit is in flight, new writes queue.
 * A lone writer (the last commit carried its one write and nothing arrived meanwhile) has
 * nobody to wait for: its next write goes in a microtask, which spares a turn of the event
 * loop per commit (one epoll call and the immediate queue: ~5 µs, about a fifth of a
 * transition's own CPU on SQLite), yielding every YIELD_EVERY_MS all the same.
 */
export class GroupCommit<W = JournalWrite, R = JournalResult> {
  private queue: Pending<W, R>[] = [];
  private scheduled = false;
  private flushing = false;
  /** The last commit carried one write and no other write arrived while it was made. */
  private lone = false;
  /** When the event loop last had a turn between two commits (monoMs()). */
  private yieldedAt = 0;
  /** Commits made and writes carried, for benchmarks and tests. */
  commits = 0;
  writes = 0;
  /** Commits sent again after they could not reach the store. */
  retries = 0;

  /**
   * `budget`: a commit that failed before it reached the store (no connection could be made,
   * see isUnsentStoreError) is sent again, with backoff, while the budget has time left, so a
   * holder rides out a restarting server as its heartbeat does. Nothing was written by the
   * failed attempt, so the retry is the same commit, not a second one. Without a budget, or
   * for any other error, the commit's writes fail.
   */
  constructor(
    private readonly store: BatchApplier<W, R>,
    private readonly budget: RetryBudget | null = null,
  ) {}

  submit(write: W): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.flushing || this.queue.length === 0) return;
    this.scheduled = true;
    if (this.lone && monoMs() - this.yieldedAt < YIELD_EVERY_MS) {
      queueMicrotask(() => void this.flush());
    } else {
      setImmediate(() => {
        this.yieldedAt = monoMs();
        void this.flush();
      });
    }
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    this.flushing = true;
    const batch = this.queue.splice(0, MAX_BATCH);
    try {
      const results = await this.applyRetrying(batch.map((p) => p.write));
      this.commits++;
      this.writes += batch.length;
      batch.forEach((p, i) => p.resolve(results[i]!));
    } catch (e) {
      for (const p of batch) p.reject(e);
    } finally {
      this.lone = batch.length === 1 && this.queue.length === 0;
      this.flushing = false;
      this.schedule();
    }
  }

  private applyRetrying(writes: W[]): Promise<R[]> {
    if (this.budget === null) return this.store.apply(writes);
    return retryUnsent(() => this.store.apply(writes), this.budget, {
      onRetry: () => this.retries++,
    });
  }
}
