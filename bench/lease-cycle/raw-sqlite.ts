import Database from "better-sqlite3";
import { migrations } from "../../src/store/sqlite/migrations.generated.js";
import { prepareStatements } from "../../src/store/sqlite/statements.js";
import type { LeaseOwner } from "../../src/domain/lease.js";

/**
 * The baseline: the SQLite backend's acquire and release statements, copied from
 * src/store/sqlite/statements.ts, run with better-sqlite3 directly in the same transaction
 * shape as SqliteStore (BEGIN IMMEDIATE; getLease, countAhead, upsertLease, purgeWaiters,
 * insertEvent, getLease; COMMIT, then headTicket, BEGIN IMMEDIATE; release, insertEvent; COMMIT) and the
 * same pragmas (WAL, then synchronous=FULL; NORMAL for the release's commit, as SqliteStore
 * commits a release without the fsync). `sqlDrift` says if the copies went stale.
 */
const SQL = {
  getLease: "SELECT * FROM quiesce_leases WHERE scope = ?",
  upsertLease: `
      INSERT INTO quiesce_leases (scope, token, held, run_id, system, host, pid, pid_start, boot_id,
        child_pid, child_pid_start, command, note, ttl_ms, acquired_at, heartbeat_at, expires_at, expiry_reported)
      VALUES (:scope, :token, 1, :run_id, :system, :host, :pid, :pid_start, :boot_id,
        :child_pid, :child_pid_start, :command, :note, :ttl_ms, :now, :now, :expires_at, 0)
      ON CONFLICT (scope) DO UPDATE SET token = excluded.token, held = 1, run_id = excluded.run_id,
        system = excluded.system, host = excluded.host, pid = excluded.pid, pid_start = excluded.pid_start,
        boot_id = excluded.boot_id, child_pid = excluded.child_pid, child_pid_start = excluded.child_pid_start,
        command = excluded.command, note = excluded.note, ttl_ms = excluded.ttl_ms,
        acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at,
        expires_at = excluded.expires_at, expiry_reported = 0, prev_owner = NULL, takeover_evidence = NULL,
        granted_ticket = NULL`,
  release: `
      UPDATE quiesce_leases
         SET held = 0, run_id = NULL, system = NULL, host = NULL, pid = NULL, pid_start = NULL,
             boot_id = NULL, child_pid = NULL, child_pid_start = NULL, command = NULL, note = NULL,
             ttl_ms = NULL, acquired_at = NULL, heartbeat_at = NULL, expires_at = NULL, expiry_reported = 0,
             prev_owner = NULL, takeover_evidence = NULL, granted_ticket = NULL
       WHERE scope = ? AND token = ? AND held = 1 AND expires_at > ?`,
  headTicket: `
      SELECT min(id) AS id FROM quiesce_waiters WHERE scope = ? AND expires_at > ?`,
  countAhead: `
      SELECT count(*) AS n FROM quiesce_waiters
       WHERE scope = :scope AND expires_at > :now AND (:ticket IS NULL OR id < :ticket)`,
  purgeWaiters: "DELETE FROM quiesce_waiters WHERE scope = ? AND expires_at <= ?",
  insertEvent: `
      INSERT INTO quiesce_events (at, kind, scope, token, run_id, host, pid, message, detail)
      VALUES (:at, :kind, :scope, :token, :run_id, :host, :pid, :message, :detail)`,
} as const;

type Name = keyof typeof SQL;

export interface RawSqlite {
  cycle: () => void;
  close: () => void;
}

/** `path` must already hold a quiesce schema (open it once with SqliteStore), or be
 * ":memory:", which gets the migrations applied here. */
export function openRawSqlite(
  path: string,
  scope: string,
  owner: LeaseOwner,
  ttlMs: number,
): RawSqlite {
  const db = new Database(path, { fileMustExist: path !== ":memory:", timeout: 10_000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL"); // after WAL, as open-sqlite.ts does
  db.pragma("foreign_keys = ON");
  if (path === ":memory:") for (const m of migrations) db.exec(m.sql);
  const q = Object.fromEntries(Object.entries(SQL).map(([k, v]) => [k, db.prepare(v)])) as Record<
    Name,
    Database.Statement
  >;
  const begin = db.prepare("BEGIN IMMEDIATE");
  const commit = db.prepare("COMMIT");
  const detail = JSON.stringify({
    system: owner.system,
    ttlMs,
    command: owner.command,
    note: owner.note,
  });
  const releaseDetail = JSON.stringify({ reason: "bench" });

  const event = (now: number, kind: string, token: number, message: string, d: string) =>
    q.insertEvent.run({
      at: now,
      kind,
      scope,
      token,
      run_id: owner.runId,
      host: owner.host,
      pid: owner.pid,
      message,
      detail: d,
    });

  const acquire = (): number => {
    begin.run();
    try {
      const now = Date.now();
      const row = q.getLease.get(scope) as { token: number; held: number } | undefined;
      const ahead = (q.countAhead.get({ scope, now, ticket: null }) as { n: number }).n;
      if ((row && row.held) || ahead > 0) throw new Error("raw bench scope is not free");
      const token = (row ? Number(row.token) : 0) + 1;
      q.upsertLease.run({
        scope,
        token,
        run_id: owner.runId,
        system: owner.system,
        host: owner.host,
        pid: owner.pid,
        pid_start: owner.pidStart,
        boot_id: owner.bootId,
        child_pid: owner.childPid,
        child_pid_start: owner.childPidStart,
        command: owner.command,
        note: owner.note,
        ttl_ms: ttlMs,
        now,
        expires_at: now + ttlMs,
      });
      q.purgeWaiters.run(scope, now);
      event(now, "lease.acquired", token, `acquired with token ${token} for ${ttlMs} ms`, detail);
      q.getLease.get(scope);
      commit.run();
      return token;
    } catch (e) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw e;
    }
  };

  const release = (token: number): void => {
    // Whether anyone waits decides how the release commits (a grant is fsynced): read first.
    if ((q.headTicket.get(scope, Date.now()) as { id: number | null }).id !== null)
      throw new Error("raw bench scope has waiters");
    db.exec("PRAGMA synchronous = NORMAL");
    begin.run();
    try {
      const now = Date.now();
      if (q.release.run(scope, token, now).changes !== 1) throw new Error("raw release refused");
      event(now, "lease.released", token, "released: bench", releaseDetail);
      commit.run();
    } catch (e) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw e;
    } finally {
      db.exec("PRAGMA synchronous = FULL");
    }
  };

  return {
    cycle: () => release(acquire()),
    close: () => db.close(),
  };
}

/** Names of the copied statements whose text differs from what the SQLite store prepares. */
export function sqliteSqlDrift(path: string): string[] {
  const db = new Database(path, { fileMustExist: true });
  try {
    const lib = prepareStatements(db);
    return (Object.keys(SQL) as Name[]).filter((k) => lib[k].source !== SQL[k]);
  } finally {
    db.close();
  }
}
