import type Database from "better-sqlite3";
import { monoMs } from "../../process/clock.js";

/** SQLITE_BUSY or SQLITE_LOCKED (and their extended codes): another connection has the lock. */
export function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^SQLITE_(BUSY|LOCKED)/.test(code);
}

/** Blocks this thread (better-sqlite3 is synchronous anyway, and so is SQLite's own wait). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Sets a pragma now. Not through a prepared statement: SQLite applies a setting pragma when
 * the statement is compiled, and such a statement recompiles itself on every run but its first,
 * so a prepared `PRAGMA busy_timeout = 0` run once does nothing at all (and costs a compile
 * each later run anyway).
 */
export function setPragma(db: Database.Database, setting: string): void {
  db.exec(`PRAGMA ${setting}`);
}

/** The first pause after a refused BEGIN IMMEDIATE, and the longest (ms). */
const FIRST_PAUSE_MS = 0.05;
const LONGEST_PAUSE_MS = 1;

/**
 * The busy timeout of one connection: SQLite's own wait for everything, except a write
 * transaction's BEGIN IMMEDIATE, which waits here for another process's writer in steps of
 * 50 µs doubling to 1 ms, up to the same timeout.
 *
 * Why not SQLite's own busy handler for the BEGIN: it sleeps 1, 2, 5, 10, 15, 20, 25... ms
 * between tries, while a write transaction here holds the lock for a fraction of a
 * millisecond (one fsync). On a contended scope that turned every collision (a waiter's ticket
 * write meeting the next holder's acquisition) into 1-3 ms of a free scope nobody took: strace
 * on the fairness bench counted more than three such sleeps per handoff.
 *
 * The connection's timeout is set to 0 for the BEGIN and left there until something other
 * than a write transaction runs (`patient()`), so that back-to-back writes (a journal's
 * transitions) pay no PRAGMA at all: two of them per commit cost 5-9 µs of a sequential
 * effect's ~170 µs per transition on disk (bench/journal). Inside a write transaction nothing
 * waits on the timeout: the write lock and the read snapshot are both taken by the BEGIN, and
 * what a commit does besides (restarting the WAL, the automatic checkpoint) is opportunistic
 * and never calls the busy handler.
 *
 * One instance per connection, shared by every area of the store (SqliteTx): the mode is the
 * connection's.
 */
export class BusyWait {
  private readonly timeoutMs: number;
  /** The connection's busy timeout is 0 right now (a write transaction ran last). */
  private failingFast = false;

  constructor(private readonly db: Database.Database) {
    this.timeoutMs = Number(db.pragma("busy_timeout", { simple: true }));
  }

  /** Before any statement that is not a write transaction's: the connection's full timeout. */
  patient(): void {
    if (!this.failingFast) return;
    setPragma(this.db, `busy_timeout = ${this.timeoutMs}`);
    this.failingFast = false;
  }

  /**
   * Runs `begin(inside)`, which must open the transaction and call `inside` first thing in
   * it; retries while the BEGIN itself is refused as busy.
   */
  run<T>(begin: (inside: () => void) => T): T {
    if (this.timeoutMs <= 0) return begin(() => undefined);
    const started = monoMs();
    let pauseMs = FIRST_PAUSE_MS;
    for (;;) {
      let begun = false;
      if (!this.failingFast) {
        setPragma(this.db, "busy_timeout = 0");
        this.failingFast = true;
      }
      try {
        return begin(() => {
          begun = true;
        });
      } catch (e) {
        // A refusal inside the transaction is not the BEGIN's: it stands.
        if (begun || !isBusy(e) || monoMs() - started >= this.timeoutMs) throw e;
      }
      sleepSync(pauseMs);
      pauseMs = Math.min(LONGEST_PAUSE_MS, pauseMs * 2);
    }
  }
}
