import type { Notifier } from "../process/notifier.js";
import { monoMs } from "../process/clock.js";

/**
 * The hosts an agent works on at once. Each finished host wakes whoever waits on `changes`
 * (the scheduler), as do stops and the window's timer.
 */
export class HostPool<T> {
  constructor(readonly changes: Notifier) {}

  private readonly running = new Map<string, { group: string | null; since: number }>();
  private readonly tasks = new Set<Promise<void>>();

  get size(): number {
    return this.running.size;
  }

  /** The groups of the hosts in flight, for the per-group limit. */
  groups(): { group: string | null }[] {
    return [...this.running.values()];
  }

  /** Hosts in flight and since when (monotonic ms). */
  entries(): [string, { group: string | null; since: number }][] {
    return [...this.running.entries()];
  }

  start(
    host: string,
    group: string | null,
    work: () => Promise<T>,
    done: (r: { ok: true; value: T } | { ok: false; error: unknown }, ms: number) => void,
  ): void {
    const since = monoMs();
    this.running.set(host, { group, since });
    const task = work().then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    const t: Promise<void> = task.then((r) => {
      this.running.delete(host);
      this.tasks.delete(t);
      done(r, monoMs() - since);
      this.changes.notify();
    });
    this.tasks.add(t);
  }

  /** Resolves when every host in flight has finished (each recorded its state). */
  async drain(): Promise<void> {
    while (this.tasks.size > 0) await Promise.all([...this.tasks]);
  }
}
