import {
  chmodSync,
  closeSync,
  openSync,
  statSync,
  watch,
  writeSync,
  type FSWatcher,
} from "node:fs";
import { WakeBoard } from "../wake-board.js";
import type { ScopeWatch } from "../store.js";

/**
 * Wake-ups for waiters on one SQLite store, across the processes of this host: a file beside
 * the store (`PATH-wake`) that a releasing process writes one byte to after its commit, and
 * that waiting processes watch (inotify on Linux: the write wakes them within a fraction of a
 * millisecond). The file carries no data and needs no fsync: losing a write loses a hint, which
 * costs a waiter its safety poll, never correctness. Every failure here (no permission, no
 * inotify, an in-memory store) degrades to polling.
 */
export class SqliteWakeups {
  readonly path: string | null;
  private watcher: FSWatcher | null = null;
  private readonly board: WakeBoard;
  private created = false;

  constructor(
    dbPath: string,
    private readonly readOnly: boolean,
  ) {
    this.path = dbPath === ":memory:" || dbPath === "" ? null : `${dbPath}-wake`;
    this.board = new WakeBoard(
      () => this.watcher !== null,
      (active) => (active ? this.start() : this.stop()),
    );
  }

  watch(scope: string): ScopeWatch {
    return this.board.watch(scope);
  }

  /** After a commit that may free a scope: wake this process's waiters and the others'. */
  signal(): void {
    this.board.hintAll();
    if (this.path === null || this.readOnly) return;
    try {
      const fd = openSync(this.path, "w");
      try {
        writeSync(fd, "1");
      } finally {
        closeSync(fd);
      }
      this.adoptMode();
    } catch {
      /* cannot write the hint: waiters will see the release on their next poll */
    }
  }

  /** The wake file takes the store's permissions, so whoever may write the store may wake. */
  private adoptMode(): void {
    if (this.created || this.path === null) return;
    this.created = true;
    try {
      const dbMode = statSync(this.path.slice(0, -"-wake".length)).mode & 0o666;
      if ((statSync(this.path).mode & 0o666) !== dbMode) chmodSync(this.path, dbMode);
    } catch {
      /* not ours to change: fine */
    }
  }

  private start(): void {
    if (this.path === null || this.watcher) return;
    try {
      if (!this.readOnly) {
        closeSync(openSync(this.path, "a"));
        this.adoptMode();
      }
      const w = watch(this.path, { persistent: false }, () => this.board.hintAll());
      w.on("error", () => {
        w.close();
        if (this.watcher === w) this.watcher = null;
      });
      this.watcher = w;
    } catch {
      this.watcher = null; // no wake file (read-only store never written) or no inotify: poll
    }
  }

  private stop(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  close(): void {
    this.stop();
  }
}
