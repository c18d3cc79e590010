import pg from "pg";
import * as lib from "../../src/store/postgres/pg-statements.js";
import type { LeaseOwner } from "../../src/domain/lease.js";
import { formatDuration } from "../../src/domain/duration.js";
import { wakeChannel } from "../../src/store/postgres/pg-wakeups.js";
import { acquisitionDetail } from "../../src/store/postgres/pg-store.js";
import { pgClientConfig } from "../lib/bench-env.js";

/**
 * The baseline: the PostgreSQL backend's ACQUIRE and RELEASE statements, copied from
 * src/store/postgres/pg-statements.ts, issued with one node-postgres client (autocommit: one
 * statement, one commit each, as PgStore does). `pgSqlDrift` says if the copies went stale.
 */
function leaseColumns(a: string): string {
  return `${a}.scope, ${a}.token, ${a}.held, ${a}.run_id, ${a}.system, ${a}.host, ${a}.pid,
    ${a}.pid_start, ${a}.boot_id, ${a}.child_pid, ${a}.child_pid_start, ${a}.command, ${a}.note,
    ${a}.ttl_ms, quiesce_ms(${a}.acquired_at) AS acquired_at, quiesce_ms(${a}.heartbeat_at) AS heartbeat_at,
    quiesce_ms(${a}.expires_at) AS expires_at, ${a}.expiry_reported, ${a}.takeover_evidence`;
}

const AHEAD = `(SELECT count(*)::int FROM quiesce_waiters w
                 WHERE w.scope = $1 AND w.expires_at > clock.now AND ($2::bigint IS NULL OR w.id < $2::bigint))`;

const ACQUIRE = `
WITH clock AS (SELECT clock_timestamp() AS now),
acq AS (
  INSERT INTO quiesce_leases AS l (scope, token, held, run_id, system, host, pid, pid_start, boot_id,
      child_pid, child_pid_start, command, note, ttl_ms, acquired_at, heartbeat_at, expires_at, expiry_reported)
  SELECT $1, 1, true, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::bigint,
         clock.now, clock.now, clock.now + $13::bigint * interval '1 millisecond', false
    FROM clock WHERE ${AHEAD} = 0
  ON CONFLICT (scope) DO UPDATE SET token = l.token + 1, held = true, run_id = excluded.run_id,
      system = excluded.system, host = excluded.host, pid = excluded.pid, pid_start = excluded.pid_start,
      boot_id = excluded.boot_id, child_pid = excluded.child_pid, child_pid_start = excluded.child_pid_start,
      command = excluded.command, note = excluded.note, ttl_ms = excluded.ttl_ms,
      acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at,
      expires_at = excluded.expires_at, expiry_reported = false, prev_owner = NULL, takeover_evidence = NULL,
      granted_ticket = NULL
   WHERE NOT l.held
  RETURNING l.*
),
deq AS (
  DELETE FROM quiesce_waiters w USING clock
   WHERE EXISTS (SELECT 1 FROM acq) AND w.scope = $1 AND (w.id = $2::bigint OR w.expires_at <= clock.now)
),
ev AS (
  INSERT INTO quiesce_events (at, kind, scope, token, run_id, host, pid, message, detail)
  SELECT clock.now, 'lease.acquired', acq.scope, acq.token, acq.run_id, acq.host, acq.pid,
         'acquired with token ' || acq.token || ' for ' || $15::text, $14::jsonb
    FROM acq, clock
),
-- Refused and asked to queue ($16, the ticket's TTL): take a place in line, committed without
-- waiting for the WAL flush (see NO_FLUSH_WAIT; nothing else was written).
quick AS (
  SELECT set_config('synchronous_commit', 'off', true) AS off
   WHERE $16::bigint IS NOT NULL AND $2::bigint IS NULL AND NOT EXISTS (SELECT 1 FROM acq)
),
enq AS (
  INSERT INTO quiesce_waiters (scope, run_id, system, host, pid, pid_start, boot_id, child_pid,
      child_pid_start, command, note, lease_ttl_ms, lease_ttl_words, enqueued_at, expires_at)
  SELECT $1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::bigint, $15::text, clock.now,
         clock.now + $16::bigint * interval '1 millisecond'
    FROM clock, quick
  RETURNING id
)
SELECT true AS won, ${leaseColumns("acq")}, quiesce_ms(clock.now) AS now, 0 AS ahead,
       NULL::bigint AS ticket
  FROM acq, clock
UNION ALL
SELECT false, ${leaseColumns("l")}, quiesce_ms(clock.now), ${AHEAD}, (SELECT id FROM enq)
  FROM clock LEFT JOIN quiesce_leases l ON l.scope = $1
 WHERE NOT EXISTS (SELECT 1 FROM acq)`;

const RELEASE = `
WITH clock AS (SELECT clock_timestamp() AS now),
cur AS (
  SELECT l.scope FROM quiesce_leases l, clock
   WHERE l.scope = $1 AND l.token = $2 AND l.held AND l.expires_at > clock.now
  FOR UPDATE OF l
),
head AS (
  SELECT w.* FROM quiesce_waiters w, clock
   WHERE w.scope = (SELECT scope FROM cur) AND w.expires_at > clock.now
   ORDER BY w.id LIMIT 1
  FOR UPDATE OF w
),
g AS (SELECT * FROM head WHERE lease_ttl_ms IS NOT NULL),
rel AS (
  UPDATE quiesce_leases l
     SET token = l.token + CASE WHEN g.id IS NULL THEN 0 ELSE 1 END, held = g.id IS NOT NULL,
         run_id = g.run_id, system = g.system, host = g.host, pid = g.pid, pid_start = g.pid_start,
         boot_id = g.boot_id, child_pid = g.child_pid, child_pid_start = g.child_pid_start,
         command = g.command, note = g.note, ttl_ms = g.lease_ttl_ms,
         acquired_at = CASE WHEN g.id IS NULL THEN NULL ELSE clock.now END,
         heartbeat_at = CASE WHEN g.id IS NULL THEN NULL ELSE clock.now END,
         expires_at = clock.now + g.lease_ttl_ms * interval '1 millisecond', expiry_reported = false,
         prev_owner = NULL, takeover_evidence = NULL, granted_ticket = g.id
    FROM cur, clock LEFT JOIN g ON true
   WHERE l.scope = cur.scope
  RETURNING l.scope, l.token, g.id AS granted, g.run_id, g.system, g.host, g.pid, g.command,
            g.note, g.lease_ttl_ms, g.lease_ttl_words
),
ev AS (
  INSERT INTO quiesce_events (at, kind, scope, token, run_id, host, pid, message, detail)
  SELECT clock.now, e.kind, $1, e.token, e.run_id, e.host, e.pid, e.message, e.detail
    FROM rel, clock, LATERAL (
      SELECT 1 AS ord, 'lease.released'::text AS kind, $2::bigint AS token, $3::text AS run_id,
             $4::text AS host, $5::integer AS pid, 'released: ' || $6::text AS message,
             jsonb_build_object('reason', $6::text) AS detail
      UNION ALL
      SELECT 2, 'lease.acquired', rel.token, rel.run_id, rel.host, rel.pid,
             'acquired with token ' || rel.token || ' for ' || coalesce(rel.lease_ttl_words, rel.lease_ttl_ms || 'ms') ||
             ' (handed over by the release of token ' || $2::bigint || ')',
             jsonb_build_object('system', rel.system, 'ttlMs', rel.lease_ttl_ms, 'command', rel.command,
                                'note', rel.note, 'ticket', rel.granted, 'grantedBy', $2::bigint)
       WHERE rel.granted IS NOT NULL
    ) AS e
   ORDER BY e.ord
),
deq AS (
  DELETE FROM quiesce_waiters w USING rel, clock
   WHERE rel.granted IS NOT NULL AND w.scope = $1 AND (w.id = rel.granted OR w.expires_at <= clock.now)
)
SELECT count(*)::int AS n FROM rel
  LEFT JOIN LATERAL (SELECT pg_notify($7::text, rel.scope || ' ' || h.id) FROM head h) AS wake ON true`;

export interface RawPg {
  cycle: () => Promise<void>;
  close: () => Promise<void>;
}

/** `storeUrl` carries `?schema=`; the schema must already hold quiesce's tables. */
export async function openRawPg(
  storeUrl: string,
  scope: string,
  owner: LeaseOwner,
  ttlMs: number,
  /** Named (server-side prepared) statements: parsed and planned once per connection. */
  prepared = false,
): Promise<RawPg> {
  const { config, schema } = pgClientConfig(storeUrl, "quiesce-bench-raw");
  const client = new pg.Client(config);
  await client.connect();
  const detail = acquisitionDetail(owner, ttlMs);
  const o = owner;
  return {
    cycle: async () => {
      const acq = await client.query<{ won: boolean; token: string }>({
        name: prepared ? "bench_acquire" : undefined,
        text: ACQUIRE,
        values: [
          scope,
          null,
          o.runId,
          o.system,
          o.host,
          o.pid,
          o.pidStart,
          o.bootId,
          o.childPid,
          o.childPidStart,
          o.command,
          o.note,
          ttlMs,
          detail,
          formatDuration(ttlMs),
          null, // no place in line: the bench's scope is free
        ],
      });
      const won = acq.rows[0];
      if (won?.won !== true) throw new Error("raw bench scope is not free");
      const token = won.token;
      const rel = await client.query<{ n: number }>({
        name: prepared ? "bench_release" : undefined,
        text: RELEASE,
        values: [scope, token, o.runId, o.host, o.pid, "bench", wakeChannel(schema)],
      });
      if (rel.rows[0]?.n !== 1) throw new Error("raw release refused");
    },
    close: () => client.end(),
  };
}

/** Names of the copied statements that differ from the PostgreSQL store's. */
export function pgSqlDrift(): string[] {
  const drift: string[] = [];
  const same = (a: string, b: string) => a === b;
  if (!same(lib.ACQUIRE, ACQUIRE)) drift.push("ACQUIRE");
  if (!same(lib.RELEASE, RELEASE)) drift.push("RELEASE");
  return drift;
}
