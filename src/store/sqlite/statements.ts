import type Database from "better-sqlite3";
import { LEASE_LIST_COLUMNS } from "../rows.js";
import { preparedOnFirstUse } from "./prepared-on-first-use.js";

/**
 * Every statement the SQLite backend runs, prepared once per connection, on first use
 * (prepared-on-first-use.ts). A lease is current when `held = 1 AND token = :token
 * AND expires_at > :now`; that fence is in each WHERE below.
 */
export function prepareStatements(db: Database.Database): Statements {
  return preparedOnFirstUse({
    getLease: () => db.prepare("SELECT * FROM quiesce_leases WHERE scope = ?"),
    // Each row as ONE value, its columns in a JSON array: better-sqlite3 pays for every value it
    // hands over (a NULL as much as a string), and with 10,000 leases 17 values a row cost
    // more than SQLite writing the array and JSON.parse reading it. A table scan and a sort:
    // walking the scope index looks every row up in the table again, which cost a third more.
    listHeld: () =>
      db
        .prepare(
          `SELECT json_array(${LEASE_LIST_COLUMNS.join(", ")}) FROM quiesce_leases NOT INDEXED
          WHERE held = 1 ORDER BY scope`,
        )
        .pluck(true),
    // The same rows with their scope beside: a row's text is its version for readLeasesSince.
    listHeldTexts: () =>
      db
        .prepare(
          `SELECT scope, json_array(${LEASE_LIST_COLUMNS.join(", ")}) FROM quiesce_leases NOT INDEXED
          WHERE held = 1 ORDER BY scope`,
        )
        .raw(true),
    upsertLease: () =>
      db.prepare(`
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
        granted_ticket = NULL`),
    // The takeover compare-and-swap: only the stale token, only once it has expired.
    takeOver: () =>
      db.prepare(`
      UPDATE quiesce_leases
         SET token = token + 1, held = 1, run_id = :run_id, system = :system, host = :host, pid = :pid,
             pid_start = :pid_start, boot_id = :boot_id, child_pid = :child_pid, child_pid_start = :child_pid_start,
             command = :command, note = :note, ttl_ms = :ttl_ms, acquired_at = :now, heartbeat_at = :now,
             expires_at = :expires_at, expiry_reported = 0, prev_owner = :prev_owner, takeover_evidence = :evidence,
             granted_ticket = NULL
       WHERE scope = :scope AND token = :stale_token AND held = 1 AND (expires_at IS NULL OR expires_at <= :now)`),
    releaseStale: () =>
      db.prepare(`
      UPDATE quiesce_leases
         SET held = 0, run_id = NULL, system = NULL, host = NULL, pid = NULL, pid_start = NULL,
             boot_id = NULL, child_pid = NULL, child_pid_start = NULL, command = NULL, note = NULL,
             ttl_ms = NULL, acquired_at = NULL, heartbeat_at = NULL, expires_at = NULL, expiry_reported = 0,
             prev_owner = NULL, takeover_evidence = NULL, granted_ticket = NULL
       WHERE scope = ? AND token = ? AND held = 1 AND (expires_at IS NULL OR expires_at <= ?)`),
    lastActivity: () =>
      db.prepare(`
      SELECT at, kind FROM quiesce_events
       WHERE run_id = ? AND kind IN (SELECT value FROM json_each(?))
       ORDER BY id DESC LIMIT 1`),
    relinquished: () =>
      db.prepare(`
      SELECT at FROM quiesce_events
       WHERE run_id = ? AND scope = ? AND token = ? AND kind = 'lease.release_rejected'
       ORDER BY id DESC LIMIT 1`),
    // One lease's renewal; a keeper tick runs it once per lease inside one transaction (one
    // commit, one fsync). Run row by row, a 10,000-lease tick costs SQLite about a quarter fewer
    // instructions than one UPDATE joined to json_each() of the same rows (callgrind), which
    // parsed each row's JSON three times, and it needs no second query for the leases it missed.
    renew: () =>
      db.prepare(`
      UPDATE quiesce_leases SET heartbeat_at = ?, expires_at = ?, ttl_ms = ?
       WHERE scope = ? AND token = ? AND held = 1 AND expires_at > ?`),
    release: () =>
      db.prepare(`
      UPDATE quiesce_leases
         SET held = 0, run_id = NULL, system = NULL, host = NULL, pid = NULL, pid_start = NULL,
             boot_id = NULL, child_pid = NULL, child_pid_start = NULL, command = NULL, note = NULL,
             ttl_ms = NULL, acquired_at = NULL, heartbeat_at = NULL, expires_at = NULL, expiry_reported = 0,
             prev_owner = NULL, takeover_evidence = NULL, granted_ticket = NULL
       WHERE scope = ? AND token = ? AND held = 1 AND expires_at > ?`),
    // Grant at release: the release of :token hands the lease to the ticket first in line.
    grantLease: () =>
      db.prepare(`
      UPDATE quiesce_leases
         SET token = token + 1, held = 1, run_id = :run_id, system = :system, host = :host, pid = :pid,
             pid_start = :pid_start, boot_id = :boot_id, child_pid = :child_pid, child_pid_start = :child_pid_start,
             command = :command, note = :note, ttl_ms = :ttl_ms, acquired_at = :now, heartbeat_at = :now,
             expires_at = :expires_at, expiry_reported = 0, prev_owner = NULL, takeover_evidence = NULL,
             granted_ticket = :ticket
       WHERE scope = :scope AND token = :token AND held = 1 AND expires_at > :now`),
    grantedTo: () =>
      db.prepare(
        "SELECT scope, token, run_id, host, pid FROM quiesce_leases WHERE granted_ticket = ? AND held = 1",
      ),
    handBack: () =>
      db.prepare(`
      UPDATE quiesce_leases
         SET held = 0, run_id = NULL, system = NULL, host = NULL, pid = NULL, pid_start = NULL,
             boot_id = NULL, child_pid = NULL, child_pid_start = NULL, command = NULL, note = NULL,
             ttl_ms = NULL, acquired_at = NULL, heartbeat_at = NULL, expires_at = NULL, expiry_reported = 0,
             prev_owner = NULL, takeover_evidence = NULL, granted_ticket = NULL
       WHERE scope = ? AND token = ? AND held = 1`),
    setChild: () =>
      db.prepare(`
      UPDATE quiesce_leases SET child_pid = :child_pid, child_pid_start = :child_pid_start
       WHERE scope = :scope AND token = :token AND held = 1 AND expires_at > :now`),
    markExpiryReported: () =>
      db.prepare(`
      UPDATE quiesce_leases SET expiry_reported = 1
       WHERE scope = ? AND token = ? AND held = 1 AND expiry_reported = 0 AND expires_at <= ?`),
    putState: () =>
      db.prepare(`
      INSERT INTO quiesce_state (scope, key, value, token, updated_at) VALUES (:scope, :key, :value, :token, :now)
      ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value, token = excluded.token, updated_at = excluded.updated_at`),
    getState: () =>
      db.prepare(
        "SELECT key, value, token, updated_at FROM quiesce_state WHERE scope = ? ORDER BY key",
      ),
    countAhead: () =>
      db.prepare(`
      SELECT count(*) AS n FROM quiesce_waiters
       WHERE scope = :scope AND expires_at > :now AND (:ticket IS NULL OR id < :ticket)`),
    headTicket: () =>
      db.prepare(`
      SELECT min(id) AS id FROM quiesce_waiters WHERE scope = ? AND expires_at > ?`),
    headWaiter: () =>
      db.prepare(`
      SELECT * FROM quiesce_waiters WHERE scope = ? AND expires_at > ? ORDER BY id LIMIT 1`),
    enqueue: () =>
      db.prepare(`
      INSERT INTO quiesce_waiters (scope, run_id, system, host, pid, pid_start, boot_id, child_pid,
        child_pid_start, command, note, lease_ttl_ms, enqueued_at, expires_at)
      VALUES (:scope, :run_id, :system, :host, :pid, :pid_start, :boot_id, :child_pid,
        :child_pid_start, :command, :note, :lease_ttl_ms, :now, :expires_at)`),
    refreshWaiter: () => db.prepare("UPDATE quiesce_waiters SET expires_at = ? WHERE id = ?"),
    deleteWaiter: () => db.prepare("DELETE FROM quiesce_waiters WHERE id = ?"),
    purgeWaiters: () =>
      db.prepare("DELETE FROM quiesce_waiters WHERE scope = ? AND expires_at <= ?"),
    insertEvent: () =>
      db.prepare(`
      INSERT INTO quiesce_events (at, kind, scope, token, run_id, host, pid, message, detail)
      VALUES (:at, :kind, :scope, :token, :run_id, :host, :pid, :message, :detail)`),
    // Newest first with a limit, reversed by the caller: `events` shows the latest N in order.
    listEvents: () =>
      db.prepare(`
      SELECT * FROM quiesce_events
       WHERE (:scope IS NULL OR scope = :scope) AND (:since IS NULL OR at >= :since) AND id > :after
         AND (:run_id IS NULL OR run_id = :run_id)
         AND (:kinds IS NULL OR kind IN (SELECT value FROM json_each(:kinds)))
       ORDER BY id DESC LIMIT :limit`),
    readMarker: () => db.prepare("SELECT value FROM quiesce_meta WHERE key = ?"),
    writeMarker: () =>
      db.prepare(
        "INSERT INTO quiesce_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      ),
  });
}

export type StatementName =
  | "takeOver"
  | "releaseStale"
  | "lastActivity"
  | "readMarker"
  | "writeMarker"
  | "relinquished"
  | "getLease"
  | "listHeld"
  | "listHeldTexts"
  | "upsertLease"
  | "renew"
  | "release"
  | "setChild"
  | "markExpiryReported"
  | "putState"
  | "getState"
  | "countAhead"
  | "headTicket"
  | "headWaiter"
  | "grantLease"
  | "grantedTo"
  | "handBack"
  | "enqueue"
  | "refreshWaiter"
  | "deleteWaiter"
  | "purgeWaiters"
  | "insertEvent"
  | "listEvents";
export type Statements = Record<StatementName, Database.Statement>;
