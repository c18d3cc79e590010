import type { JournalResult, JournalWrite } from "./journal-store.js";

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
 * Group commit: journal writes that arrive while a commit is being prepared or is in flight
 * share the next commit (one fsync on SQLite, one WAL flush on PostgreSQL). A write's promise
 * resolves only after the commit that holds it returned, so "DISPATCHED is durable before the
 * request leaves" (I8) holds whatever the batching: the caller sends after it awaited the write.
 *
 * The first write waits one event-loop turn (setImmediate) so that writes issued in the same
 * turn (16 runs woken by one commit) go together; while a commit is in flight, new writes queue.
 */
export class GroupCommit<W = JournalWrite, R = JournalResult> {
  private queue: Pending<W, R>[] = [];
  private scheduled = false;
  private flushing = false;
  /** Commits made and writes carried, for benchmarks and tests. */
  commits = 0;
  writes = 0;

  constructor(private readonly store: BatchApplier<W, R>) {}

  submit(write: W): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.flushing || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    this.flushing = true;
    const batch = this.queue.splice(0, MAX_BATCH);
    try {
      const results = await this.store.apply(batch.map((p) => p.write));
      this.commits++;
      this.writes += batch.length;
      batch.forEach((p, i) => p.resolve(results[i]!));
    } catch (e) {
      for (const p of batch) p.reject(e);
    } finally {
      this.flushing = false;
      this.schedule();
    }
  }
}
