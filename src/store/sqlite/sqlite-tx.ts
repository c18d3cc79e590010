import type Database from "better-sqlite3";
import type { EventInput } from "../../domain/event.js";
import { sqliteError } from "./open-sqlite.js";

/**
 * The transactions every SQLite store area (leases, journal, waves) runs on the shared
 * connection: the store's clock is read inside the transaction (I10), writes take the write
 * lock up front (`BEGIN IMMEDIATE`, so a read never has to be upgraded mid-way), and a driver
 * error becomes one sentence naming the file and what was being done.
 */
export class SqliteTx {
  /** Compiled once and reused: it runs `fn` with the clock read inside. */
  private readonly txn: Database.Transaction<(fn: (now: number) => unknown) => unknown>;

  constructor(
    db: Database.Database,
    private readonly location: string,
  ) {
    this.txn = db.transaction((fn: (now: number) => unknown) => fn(Date.now()));
  }

  read<T>(doing: string, fn: (now: number) => T): Promise<T> {
    return this.settle(doing, () => this.txn.deferred(fn) as T);
  }

  write<T>(doing: string, fn: (now: number) => T): Promise<T> {
    return this.settle(doing, () => this.txn.immediate(fn) as T);
  }

  /** Outside a transaction (a single statement is one anyway). */
  settle<T>(doing: string, fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (e) {
      return Promise.reject(sqliteError(e, this.location, doing));
    }
  }
}

/** The named parameters of every area's `insertEvent` statement. */
export function eventParams(now: number, e: EventInput) {
  return {
    at: now,
    kind: e.kind,
    scope: e.scope,
    token: e.token,
    run_id: e.runId,
    host: e.host,
    pid: e.pid,
    message: e.message,
    detail: JSON.stringify(e.detail ?? {}),
  };
}
