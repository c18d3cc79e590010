import type Database from "better-sqlite3";
import type { EventInput } from "../../domain/event.js";
import { BusyWait, isBusy, setPragma } from "./busy-wait.js";
import { sqliteError } from "./open-sqlite.js";

/**
 * The transactions every SQLite store area (leases, journal, waves) runs on the shared
 * connection, one instance per connection: the store's clock is read inside the transaction
 * (I10), writes take the write lock up front (`BEGIN IMMEDIATE`, so a read never has to be
 * upgraded mid-way; waiting for it in fine steps, see busy-wait.ts), and a driver error becomes
 * one sentence naming the file and what was being done. Every statement on the connection goes
 * through here: that is what keeps the connection's busy timeout right for each (BusyWait).
 */
export class SqliteTx {
  /** Compiled once and reused: it runs `fn` with the clock read inside. */
  private readonly txn: Database.Transaction<(fn: (now: number) => unknown) => unknown>;
  private readonly busy: BusyWait;

  constructor(
    private readonly db: Database.Database,
    private readonly location: string,
  ) {
    this.txn = db.transaction((fn: (now: number) => unknown) => fn(Date.now()));
    this.busy = new BusyWait(db);
  }

  read<T>(doing: string, fn: (now: number) => T): Promise<T> {
    return this.settle(doing, () => {
      this.busy.patient();
      return this.txn.deferred(fn) as T;
    });
  }

  write<T>(doing: string, fn: (now: number) => T): Promise<T> {
    return this.settle(doing, () =>
      this.busy.run(
        (inside) =>
          this.txn.immediate((now: number) => {
            inside();
            return fn(now);
          }) as T,
      ),
    );
  }

  /**
   * A write that needs to survive this process's crash but not the machine's: committed to the
   * WAL without the fsync (synchronous=NORMAL for this one commit). For records whose loss in
   * a power cut can only be a loss of the writers themselves (a waiter's place in line, a
   * holder's release: see SqliteStore.release), so that they do not hold the write lock
   * through a disk flush that the next holder waits on.
   */
  writeUnsynced<T>(doing: string, fn: (now: number) => T): Promise<T> {
    if (this.db.inTransaction) return this.write(doing, fn);
    setPragma(this.db, "synchronous = NORMAL");
    try {
      return this.write(doing, fn);
    } finally {
      setPragma(this.db, "synchronous = FULL");
    }
  }

  /**
   * A single read whose answer only chooses how to write next (SqliteStore.release: whether
   * anyone waits, which decides the commit's flush). It runs in whatever busy mode the
   * connection is in, as switching it costs two pragmas; a WAL reader is refused as busy only
   * in rare moments (another connection recovering the WAL index), and then `ifBusy` answers.
   */
  hint<T>(doing: string, fn: () => T, ifBusy: T): T {
    try {
      return fn();
    } catch (e) {
      if (isBusy(e)) return ifBusy;
      throw sqliteError(e, this.location, doing);
    }
  }

  /** Outside a transaction (a single statement is one anyway). */
  run<T>(doing: string, fn: () => T): Promise<T> {
    return this.settle(doing, () => {
      this.busy.patient();
      return fn();
    });
  }

  private settle<T>(doing: string, fn: () => T): Promise<T> {
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
