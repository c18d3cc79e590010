import type { ScopeWatch } from "./store.js";

/**
 * `QUIESCE_FAULT_DROP_WAKEUPS=1` makes every store of the process ignore the wake-up hints it
 * receives (they are still sent). It exists for tests: it shows that a lost hint costs a waiter
 * its safety poll and nothing else.
 */
export function wakeupsDropped(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.QUIESCE_FAULT_DROP_WAKEUPS === "1";
}

/** One open watch: a waiter's view of the hints for its scope. */
interface Watcher {
  /** The waiter's place in line, once it has one: hints naming another ticket pass it by. */
  ticket: number | null;
  hints: number;
  /** Hints that named this waiter's ticket: it was first in line at a release. */
  named: number;
  /** Between awaitTicket() and setTicket(): the tickets that hints named meanwhile. */
  pending: Set<number> | null;
  waiting: Set<() => void>;
}

/**
 * Wake-up hints for waiters, per scope, in one process. A backend feeds it (PostgreSQL's
 * LISTEN connection, SQLite's watched file) and waiters block on it between their polls.
 * A hint only means "re-read the store": the waiter's next read decides, so a spurious hint
 * costs a read and a lost one costs the waiter's safety poll.
 *
 * A release names the ticket first in line, and only that waiter is woken: the others could
 * not take the lease anyway, and waking every waiter on every handoff made each handoff cost a
 * read per waiter (with 4 waiters on 2 cores, most of a handoff's time). A waiter whose ticket
 * is not known yet (it is still enqueueing) takes every hint for its scope.
 *
 * `onActive(true)` is called when the first watch opens, `onActive(false)` when the last one
 * closes, so a backend listens only while someone waits.
 */
export class WakeBoard {
  private readonly scopes = new Map<string, Set<Watcher>>();
  private readonly drop = wakeupsDropped();
  private watchers = 0;

  constructor(
    private readonly isLive: () => boolean,
    private readonly onActive: (active: boolean) => void = () => undefined,
  ) {}

  /**
   * A hint for one scope (PostgreSQL names the scope in the notification); with `ticket`, only
   * for the waiter holding that place in line.
   */
  hint(scope: string, ticket?: number): void {
    if (this.drop) return;
    for (const w of this.scopes.get(scope) ?? []) {
      if (ticket !== undefined && w.pending !== null) w.pending.add(ticket);
      else if (ticket === undefined || w.ticket === null || w.ticket === ticket) {
        wake(w, ticket !== undefined && w.ticket === ticket);
      }
    }
  }

  /** A hint for the waiter holding `ticket`, whatever its scope (tickets are unique per store). */
  hintTicket(ticket: number): void {
    if (this.drop) return;
    for (const set of this.scopes.values()) {
      for (const w of set) {
        if (w.pending !== null) w.pending.add(ticket);
        else if (w.ticket === null || w.ticket === ticket) wake(w, w.ticket === ticket);
      }
    }
  }

  /** A hint for every scope (SQLite's wake file may not say which). */
  hintAll(): void {
    if (this.drop) return;
    for (const set of this.scopes.values()) for (const w of set) wake(w, false);
  }

  watch(scope: string): ScopeWatch {
    let set = this.scopes.get(scope);
    if (!set) {
      set = new Set();
      this.scopes.set(scope, set);
    }
    const watchers = set;
    const me: Watcher = { ticket: null, hints: 0, named: 0, pending: null, waiting: new Set() };
    watchers.add(me);
    if (this.watchers++ === 0) this.onActive(true);
    let closed = false;
    const isLive = () => !closed && this.isLive();
    const closing = () => {
      watchers.delete(me);
      if (watchers.size === 0) this.scopes.delete(scope);
      if (--this.watchers === 0) this.onActive(false);
    };
    return {
      get hints() {
        return me.hints;
      },
      get named() {
        return me.named;
      },
      get live() {
        return isLive();
      },
      awaitTicket() {
        if (me.ticket === null) me.pending = new Set();
      },
      setTicket(ticket) {
        me.ticket = ticket;
        const named = me.pending?.has(ticket) ?? false;
        me.pending = null;
        if (named) wake(me, true);
      },
      next(seen, ms, signal) {
        return new Promise<void>((resolve, reject) => {
          if (signal?.aborted) return reject(signal.reason as Error);
          if (me.hints > seen || closed) return resolve();
          const done = () => {
            clearTimeout(timer);
            me.waiting.delete(done);
            signal?.removeEventListener("abort", onAbort);
            resolve();
          };
          const onAbort = () => {
            done();
            reject(signal!.reason as Error);
          };
          const timer = setTimeout(done, Math.max(0, ms));
          me.waiting.add(done);
          signal?.addEventListener("abort", onAbort, { once: true });
        });
      },
      close() {
        if (closed) return;
        closed = true;
        for (const w of [...me.waiting]) w();
        closing();
      },
    };
  }
}

function wake(w: Watcher, named: boolean): void {
  w.hints++;
  if (named) w.named++;
  for (const done of [...w.waiting]) done();
}
