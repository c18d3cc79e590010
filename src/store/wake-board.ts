import type { ScopeWatch } from "./store.js";

/**
 * `QUIESCE_FAULT_DROP_WAKEUPS=1` makes every store of the process ignore the wake-up hints it
 * receives (they are still sent). It exists for tests: it shows that a lost hint costs a waiter
 * its safety poll and nothing else.
 */
export function wakeupsDropped(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.QUIESCE_FAULT_DROP_WAKEUPS === "1";
}

interface Entry {
  hints: number;
  watchers: number;
  waiting: Set<() => void>;
}

/**
 * Wake-up hints for waiters, per scope, in one process. A backend feeds it (PostgreSQL's
 * LISTEN connection, SQLite's watched file) and waiters block on it between their polls.
 * A hint only means "re-read the store": the waiter's next read decides, so a spurious hint
 * costs a read and a lost one costs the waiter's safety poll.
 *
 * `onActive(true)` is called when the first watch opens, `onActive(false)` when the last one
 * closes, so a backend listens only while someone waits.
 */
export class WakeBoard {
  private readonly entries = new Map<string, Entry>();
  private readonly drop = wakeupsDropped();
  private watchers = 0;

  constructor(
    private readonly isLive: () => boolean,
    private readonly onActive: (active: boolean) => void = () => undefined,
  ) {}

  /** A hint for one scope (PostgreSQL names the scope in the notification). */
  hint(scope: string): void {
    if (this.drop) return;
    const e = this.entries.get(scope);
    if (e) wake(e);
  }

  /** A hint for every scope (SQLite's wake file does not say which). */
  hintAll(): void {
    if (this.drop) return;
    for (const e of this.entries.values()) wake(e);
  }

  watch(scope: string): ScopeWatch {
    let e = this.entries.get(scope);
    if (!e) {
      e = { hints: 0, watchers: 0, waiting: new Set() };
      this.entries.set(scope, e);
    }
    const entry = e;
    entry.watchers++;
    if (this.watchers++ === 0) this.onActive(true);
    let closed = false;
    const isLive = () => !closed && this.isLive();
    const closing = () => {
      if (--entry.watchers === 0) this.entries.delete(scope);
      if (--this.watchers === 0) this.onActive(false);
    };
    return {
      get hints() {
        return entry.hints;
      },
      get live() {
        return isLive();
      },
      next(seen, ms, signal) {
        return new Promise<void>((resolve, reject) => {
          if (signal?.aborted) return reject(signal.reason as Error);
          if (entry.hints > seen || closed) return resolve();
          const done = () => {
            clearTimeout(timer);
            entry.waiting.delete(done);
            signal?.removeEventListener("abort", onAbort);
            resolve();
          };
          const onAbort = () => {
            done();
            reject(signal!.reason as Error);
          };
          const timer = setTimeout(done, Math.max(0, ms));
          entry.waiting.add(done);
          signal?.addEventListener("abort", onAbort, { once: true });
        });
      },
      close() {
        if (closed) return;
        closed = true;
        for (const w of [...entry.waiting]) w();
        closing();
      },
    };
  }
}

function wake(e: Entry): void {
  e.hints++;
  for (const w of [...e.waiting]) w();
}
