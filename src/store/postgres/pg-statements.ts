/**
 * The PostgreSQL backend's SQL. Times are the server's clock_timestamp() (I10), read once per
 * statement in the `clock` CTE. A lease is current when `held AND token = $token AND
 * expires_at > now`; every write under a lease repeats that fence in its WHERE clause, and the
 * UPDATE's row lock (or FOR KEY SHARE) keeps a concurrent acquisition from slipping in between.
 * Why KEY SHARE, and not SHARE: migrations/0007_fence_key_share.sql.
 */
import { LEASE_LIST_COLUMNS } from "../rows.js";

/** Lease columns with times converted to epoch ms, so rows map like SQLite's. */
export function leaseColumns(a: string): string {
  return `${a}.scope, ${a}.token, ${a}.held, ${a}.run_id, ${a}.system, ${a}.host, ${a}.pid,
    ${a}.pid_start, ${a}.boot_id, ${a}.child_pid, ${a}.child_pid_start, ${a}.command, ${a}.note,
    ${a}.ttl_ms, quiesce_ms(${a}.acquired_at) AS acquired_at, quiesce_ms(${a}.heartbeat_at) AS heartbeat_at,
    quiesce_ms(${a}.expires_at) AS expires_at, ${a}.expiry_reported, ${a}.takeover_evidence`;
}

const TIMES = new Set<string>(["acquired_at", "heartbeat_at", "expires_at"]);

/**
 * Every held lease in scope order, with the clock: LEASE_LIST_COLUMNS (times as epoch ms), then
 * `now`. The join gives one row (all lease columns null) when nothing is held, so the clock
 * still comes back in the same round trip.
 */
export const LIST_LEASES = `
SELECT ${LEASE_LIST_COLUMNS.map((c) => (TIMES.has(c) ? `quiesce_ms(l.${c})` : `l.${c}`)).join(", ")},
       quiesce_ms(clock_timestamp()) AS now
  FROM (SELECT 1) AS one LEFT JOIN quiesce_leases l ON l.held ORDER BY l.scope`;

const AHEAD = `(SELECT count(*)::int FROM quiesce_waiters w
                 WHERE w.scope = $1 AND w.expires_at > clock.now AND ($2::bigint IS NULL OR w.id < $2::bigint))`;

/**
 * After a release (joined LATERAL to `rel`, with `clock`): notify the live ticket first in line,
 * as "SCOPE TICKET" (scopes hold no spaces), so that only that waiter wakes (see WakeBoard).
 * No waiter, no notification.
 */
export function wakeHead(channel: string): string {
  return `
  SELECT pg_notify(${channel}::text, rel.scope || ' ' || h.id)
    FROM (SELECT min(w.id) AS id FROM quiesce_waiters w, clock
           WHERE w.scope = rel.scope AND w.expires_at > clock.now) AS h
   WHERE h.id IS NOT NULL`;
}
const WAKE_HEAD = wakeHead("$7");

/** An acquisition's upsert of the lease row (alias `l`): a row not held takes the new owner and
 * the next token; a held one is left alone (RETURNING gives nothing for it). */
const TAKE_IF_FREE = `
  ON CONFLICT (scope) DO UPDATE SET token = l.token + 1, held = true, run_id = excluded.run_id,
      system = excluded.system, host = excluded.host, pid = excluded.pid, pid_start = excluded.pid_start,
      boot_id = excluded.boot_id, child_pid = excluded.child_pid, child_pid_start = excluded.child_pid_start,
      command = excluded.command, note = excluded.note, ttl_ms = excluded.ttl_ms,
      acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at,
      expires_at = excluded.expires_at, expiry_reported = false, prev_owner = NULL, takeover_evidence = NULL,
      granted_ticket = NULL
   WHERE NOT l.held`.slice(1);

/**
 * $1 scope, $2 ticket, $3..$12 owner, $13 ttl_ms, $14 event detail, $15 the TTL as words,
 * $16 the TTL of a place in line to take if refused (null: none; the ticket carries the owner
 * and $13, so that a release can grant it the lease). One statement, one commit.
 * One row either way: the lease won (`won`), or what was in the way, as PEEK reads it (the
 * lease row as of the statement's snapshot, and the waiters ahead), so a refusal costs no
 * second round trip.
 */
export const ACQUIRE = `
WITH clock AS (SELECT clock_timestamp() AS now),
acq AS (
  INSERT INTO quiesce_leases AS l (scope, token, held, run_id, system, host, pid, pid_start, boot_id,
      child_pid, child_pid_start, command, note, ttl_ms, acquired_at, heartbeat_at, expires_at, expiry_reported)
  SELECT $1, 1, true, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::bigint,
         clock.now, clock.now, clock.now + $13::bigint * interval '1 millisecond', false
    FROM clock WHERE ${AHEAD} = 0
${TAKE_IF_FREE}
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

/** Live tickets ahead of ticket `ticket` (or all, when null) for `scope`, as of `clock`. */
function aheadOf(scope: string, ticket: string): string {
  return `(SELECT count(*)::int FROM quiesce_waiters w
            WHERE w.scope = ${scope} AND w.expires_at > clock.now AND (${ticket} IS NULL OR w.id < ${ticket}))`;
}

/**
 * ACQUIRE for several scopes at once (distinct scopes; a wave's hosts starting together), one
 * row in each of the arrays per acquisition: $1 scopes, $2 tickets, $3..$12 the owners' columns
 * (as ACQUIRE's), $13 ttl_ms, $14 event details (JSON text), $15 TTLs in words, $16 the TTLs of
 * a place in line to take if refused. Each acquisition is decided as ACQUIRE decides it, and
 * answers with ACQUIRE's row plus `ord`, its place in the arrays (from 1).
 *
 * Rows are inserted in scope order, so two of these statements lock the lease rows they share
 * in the same order (every other writer locks one lease row, then tickets). The places in line
 * commit without the WAL flush only when nothing was acquired: an acquisition must be durable.
 */
export const ACQUIRE_MANY = `
WITH clock AS (SELECT clock_timestamp() AS now),
r AS (
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::integer[],
                       $7::text[], $8::text[], $9::integer[], $10::text[], $11::text[], $12::text[],
                       $13::bigint[], $14::text[], $15::text[], $16::bigint[])
    WITH ORDINALITY AS r(scope, ticket, run_id, system, host, pid, pid_start, boot_id, child_pid,
                         child_pid_start, command, note, ttl_ms, detail, ttl_words, queue_ttl_ms, ord)
),
acq AS (
  INSERT INTO quiesce_leases AS l (scope, token, held, run_id, system, host, pid, pid_start, boot_id,
      child_pid, child_pid_start, command, note, ttl_ms, acquired_at, heartbeat_at, expires_at, expiry_reported)
  SELECT r.scope, 1, true, r.run_id, r.system, r.host, r.pid, r.pid_start, r.boot_id, r.child_pid,
         r.child_pid_start, r.command, r.note, r.ttl_ms,
         clock.now, clock.now, clock.now + r.ttl_ms * interval '1 millisecond', false
    FROM r, clock WHERE ${aheadOf("r.scope", "r.ticket")} = 0
   ORDER BY r.scope
${TAKE_IF_FREE}
  RETURNING l.*
),
deq AS (
  DELETE FROM quiesce_waiters w USING acq, r, clock
   WHERE r.scope = acq.scope AND w.scope = acq.scope AND (w.id = r.ticket OR w.expires_at <= clock.now)
),
ev AS (
  INSERT INTO quiesce_events (at, kind, scope, token, run_id, host, pid, message, detail)
  SELECT clock.now, 'lease.acquired', acq.scope, acq.token, acq.run_id, acq.host, acq.pid,
         'acquired with token ' || acq.token || ' for ' || r.ttl_words, r.detail::jsonb
    FROM acq JOIN r ON r.scope = acq.scope, clock
   ORDER BY r.ord
),
quick AS (
  SELECT set_config('synchronous_commit', 'off', true) AS off WHERE NOT EXISTS (SELECT 1 FROM acq)
),
enq AS (
  INSERT INTO quiesce_waiters (scope, run_id, system, host, pid, pid_start, boot_id, child_pid,
      child_pid_start, command, note, lease_ttl_ms, lease_ttl_words, enqueued_at, expires_at)
  SELECT r.scope, r.run_id, r.system, r.host, r.pid, r.pid_start, r.boot_id, r.child_pid,
         r.child_pid_start, r.command, r.note, r.ttl_ms, r.ttl_words, clock.now,
         clock.now + r.queue_ttl_ms * interval '1 millisecond'
    FROM r CROSS JOIN clock LEFT JOIN quick ON true
   WHERE r.queue_ttl_ms IS NOT NULL AND r.ticket IS NULL
     AND NOT EXISTS (SELECT 1 FROM acq WHERE acq.scope = r.scope)
   ORDER BY r.ord
  RETURNING id, scope
)
SELECT r.ord, true AS won, ${leaseColumns("acq")}, quiesce_ms(clock.now) AS now, 0 AS ahead,
       NULL::bigint AS ticket
  FROM r JOIN acq ON acq.scope = r.scope, clock
UNION ALL
SELECT r.ord, false, ${leaseColumns("l")}, quiesce_ms(clock.now), ${aheadOf("r.scope", "r.ticket")},
       (SELECT enq.id FROM enq WHERE enq.scope = r.scope)
  FROM r CROSS JOIN clock LEFT JOIN quiesce_leases l ON l.scope = r.scope
 WHERE NOT EXISTS (SELECT 1 FROM acq WHERE acq.scope = r.scope)`;

/** $1 scope, $2 ticket: the lease (if any row), the queue ahead, and whether the lease was
 * granted to the ticket, at one instant. */
export const PEEK = `
WITH clock AS (SELECT clock_timestamp() AS now)
SELECT ${leaseColumns("l")}, quiesce_ms(clock.now) AS now, ${AHEAD} AS ahead,
       coalesce(l.held AND l.granted_ticket = $2::bigint, false) AS granted
  FROM clock LEFT JOIN quiesce_leases l ON l.scope = $1`;

/** $1 scope, $2 token, $3 the wake-up channel: the first reader to find the lease past expiry
 * logs it, once per token, and wakes the waiters (one of them may take it over). */
export const NOTE_EXPIRY = `
WITH clock AS (SELECT clock_timestamp() AS now),
m AS (
  UPDATE quiesce_leases l SET expiry_reported = true FROM clock
   WHERE l.scope = $1 AND l.token = $2 AND l.held AND NOT l.expiry_reported AND l.expires_at <= clock.now
  RETURNING l.*
)
INSERT INTO quiesce_events (at, kind, scope, token, run_id, host, pid, message, detail)
SELECT clock.now, 'lease.expired', m.scope, m.token, m.run_id, m.host, m.pid,
       'lease expired ' || quiesce_duration(quiesce_ms(clock.now) - quiesce_ms(m.expires_at)) ||
       ' ago without being released (last heartbeat ' || quiesce_duration(quiesce_ms(clock.now) - quiesce_ms(m.heartbeat_at)) || ' ago)',
       jsonb_build_object('expiresAt', quiesce_ms(m.expires_at), 'heartbeatAt', quiesce_ms(m.heartbeat_at),
                          'owner', jsonb_build_object('runId', m.run_id, 'system', m.system, 'host', m.host, 'pid', m.pid))
  FROM m, clock, LATERAL (SELECT pg_notify($3::text, m.scope)) AS wake`;

/**
 * $1 scopes, $2 tokens, $3 ttls: every lease of a keeper tick in one statement, which answers
 * only with the scopes it could NOT renew (usually none). The rows are not sorted: each lease is
 * renewed by its one holder, and the other writers of a held row (a takeover, a release by
 * token) lock a single row, so no two multi-row lockers can deadlock.
 */
export const RENEW = `
WITH clock AS (SELECT clock_timestamp() AS now),
r AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS r(scope, token, ttl_ms)),
upd AS (
  UPDATE quiesce_leases l
     SET heartbeat_at = clock.now, expires_at = clock.now + r.ttl_ms * interval '1 millisecond', ttl_ms = r.ttl_ms
    FROM clock, r
   WHERE l.scope = r.scope AND l.token = r.token AND l.held AND l.expires_at > clock.now
  RETURNING l.scope
)
SELECT r.scope FROM r WHERE NOT EXISTS (SELECT 1 FROM upd WHERE upd.scope = r.scope)`;

/**
 * $1 scope, $2 token, $3 run_id, $4 host, $5 pid, $6 reason, $7 the wake-up channel.
 *
 * Grant at release: when the oldest live ticket carries a lease TTL, the same UPDATE that ends
 * the lease starts the ticket's (token + 1, its owner, `granted_ticket`), its `lease.acquired`
 * follows the `lease.released` in the log, and the ticket leaves the line: the next holder's
 * lease is as durable as this release, with no commit of its own to wait for. Otherwise (no
 * ticket, or one taken before grants existed) the scope is simply freed.
 *
 * Locks, in this order: the lease row (`cur`: a row lock before any ticket's, as every other
 * writer of both takes them), then the head ticket. A waiter leaving the line at the same
 * moment either deletes its ticket first (this statement then skips it and grants nothing) or
 * waits for this commit and finds the grant to hand back (HAND_BACK).
 *
 * Whoever is first in line is notified, as "SCOPE TICKET" (see WakeBoard), in the same
 * commit; NOTIFY takes a database-wide lock at commit, so only when someone waits.
 */
export const RELEASE = `
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

/**
 * $1 ticket, $2 reason, $3 the wake-up channel: a waiter that left the line after a release had
 * granted it the lease hands the lease back (released, the token counter kept; the event names
 * the grantee, whose lease it was), and the line is woken. Run only when leaving found no
 * ticket to delete.
 */
export const HAND_BACK = `
WITH clock AS (SELECT clock_timestamp() AS now),
g AS (
  SELECT l.scope, l.token, l.run_id, l.host, l.pid FROM quiesce_leases l
   WHERE l.granted_ticket = $1::bigint AND l.held
  FOR UPDATE OF l
),
rel AS (
  UPDATE quiesce_leases l
     SET held = false, run_id = NULL, system = NULL, host = NULL, pid = NULL, pid_start = NULL,
         boot_id = NULL, child_pid = NULL, child_pid_start = NULL, command = NULL, note = NULL,
         ttl_ms = NULL, acquired_at = NULL, heartbeat_at = NULL, expires_at = NULL, expiry_reported = false,
         prev_owner = NULL, takeover_evidence = NULL, granted_ticket = NULL
    FROM g
   WHERE l.scope = g.scope AND l.token = g.token
  RETURNING g.scope, g.token, g.run_id, g.host, g.pid
),
ev AS (
  INSERT INTO quiesce_events (at, kind, scope, token, run_id, host, pid, message, detail)
  SELECT clock.now, 'lease.released', rel.scope, rel.token, rel.run_id, rel.host, rel.pid,
         'released: ' || $2::text, jsonb_build_object('reason', $2::text, 'ticket', $1::bigint)
    FROM rel, clock
)
SELECT count(*)::int AS n FROM rel LEFT JOIN LATERAL (SELECT pg_notify($3::text, rel.scope)) AS wake ON true`;

/** The commands' pids of several leases (distinct scopes): $1 scopes, $2 tokens, $3 pids,
 * $4 start times; SET_CHILD for each. Returns the scopes written. */
export const SET_CHILDREN = `
UPDATE quiesce_leases l SET child_pid = r.pid, child_pid_start = r.start
  FROM unnest($1::text[], $2::bigint[], $3::int[], $4::text[]) AS r(scope, token, pid, start)
 WHERE l.scope = r.scope AND l.token = r.token AND l.held AND l.expires_at > clock_timestamp()
RETURNING l.scope`;

/** $1 scope, $2 token, $3 child pid, $4 child start. */
export const SET_CHILD = `
UPDATE quiesce_leases SET child_pid = $3, child_pid_start = $4
 WHERE scope = $1 AND token = $2 AND held AND expires_at > clock_timestamp()
RETURNING scope`;

/** $1 scope, $2 token, $3 key, $4 value. FOR KEY SHARE holds the lease row until commit, so an
 * acquisition (which must lock it to change the token) cannot commit in between. */
export const PUT_STATE = `
WITH clock AS (SELECT clock_timestamp() AS now),
fence AS (
  SELECT l.scope FROM quiesce_leases l, clock
   WHERE l.scope = $1 AND l.token = $2 AND l.held AND l.expires_at > clock.now
  FOR KEY SHARE OF l
)
INSERT INTO quiesce_state (scope, key, value, token, updated_at)
SELECT $1, $3, $4, $2, clock.now FROM fence, clock
ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value, token = excluded.token, updated_at = excluded.updated_at
RETURNING scope`;

export const INSERT_EVENT = `
INSERT INTO quiesce_events (at, kind, scope, token, run_id, host, pid, message, detail)
VALUES (clock_timestamp(), $1, $2, $3, $4, $5, $6, $7, $8::jsonb)`;

export const LIST_EVENTS = `
SELECT id, quiesce_ms(at) AS at, kind, scope, token, run_id, host, pid, message, detail
  FROM quiesce_events
 WHERE ($1::text IS NULL OR scope = $1) AND ($2::bigint IS NULL OR at >= to_timestamp($2::bigint / 1000.0))
   AND id > $3 AND ($5::text IS NULL OR run_id = $5) AND ($6::text[] IS NULL OR kind = ANY($6::text[]))
 ORDER BY id DESC LIMIT $4`;

/**
 * The takeover compare-and-swap. $1 scope, $2 ticket, $3..$12 owner, $13 ttl_ms, $14 stale
 * token, $15 previous owner (jsonb), $16 the takeover record (jsonb), $17 event message.
 * Concurrent contenders queue on the row lock; after the first commits, the others re-check
 * `token = $14` against the new row and match nothing: exactly one wins.
 */
export const TAKE_OVER = `
WITH clock AS (SELECT clock_timestamp() AS now),
tk AS (
  UPDATE quiesce_leases l
     SET token = l.token + 1, held = true, run_id = $3, system = $4, host = $5, pid = $6, pid_start = $7,
         boot_id = $8, child_pid = $9, child_pid_start = $10, command = $11, note = $12, ttl_ms = $13::bigint,
         acquired_at = clock.now, heartbeat_at = clock.now,
         expires_at = clock.now + $13::bigint * interval '1 millisecond', expiry_reported = false,
         prev_owner = $15::jsonb, takeover_evidence = $16::jsonb, granted_ticket = NULL
    FROM clock
   WHERE l.scope = $1 AND l.token = $14::bigint AND l.held
     AND (l.expires_at IS NULL OR l.expires_at <= clock.now) AND ${AHEAD} = 0
  RETURNING l.*
),
deq AS (
  DELETE FROM quiesce_waiters w USING clock
   WHERE EXISTS (SELECT 1 FROM tk) AND w.scope = $1 AND (w.id = $2::bigint OR w.expires_at <= clock.now)
),
ev AS (
  INSERT INTO quiesce_events (at, kind, scope, token, run_id, host, pid, message, detail)
  SELECT clock.now, 'lease.taken_over', tk.scope, tk.token, tk.run_id, tk.host, tk.pid, $17::text,
         $16::jsonb || jsonb_build_object('ttlMs', $13::bigint, 'system', $4::text)
    FROM tk, clock
)
SELECT ${leaseColumns("tk")}, quiesce_ms(clock.now) AS now FROM tk, clock`;

/** $1 scope, $2 token, $3 run_id, $4 host, $5 pid, $6 reason, $7 the wake-up channel: release
 * an expired lease. */
export const RELEASE_STALE = `
WITH clock AS (SELECT clock_timestamp() AS now),
rel AS (
  UPDATE quiesce_leases l
     SET held = false, run_id = NULL, system = NULL, host = NULL, pid = NULL, pid_start = NULL,
         boot_id = NULL, child_pid = NULL, child_pid_start = NULL, command = NULL, note = NULL,
         ttl_ms = NULL, acquired_at = NULL, heartbeat_at = NULL, expires_at = NULL, expiry_reported = false,
         prev_owner = NULL, takeover_evidence = NULL, granted_ticket = NULL
    FROM clock
   WHERE l.scope = $1 AND l.token = $2 AND l.held AND (l.expires_at IS NULL OR l.expires_at <= clock.now)
  RETURNING l.scope
),
ev AS (
  INSERT INTO quiesce_events (at, kind, scope, token, run_id, host, pid, message, detail)
  SELECT clock.now, 'lease.released', $1, $2, $3, $4, $5, 'released: ' || $6::text,
         jsonb_build_object('reason', $6::text, 'stale', true)
    FROM rel, clock
)
SELECT count(*)::int AS n FROM rel LEFT JOIN LATERAL (${WAKE_HEAD}) AS wake ON true`;

/** $1 run id, $2 kinds (text[]), $3 scope, $4 token: last working event, and the give-up. */
export const OWNER_ACTIVITY = `
SELECT (SELECT quiesce_ms(at) FROM quiesce_events
         WHERE run_id = $1 AND kind = ANY($2::text[]) ORDER BY id DESC LIMIT 1) AS at,
       (SELECT kind FROM quiesce_events
         WHERE run_id = $1 AND kind = ANY($2::text[]) ORDER BY id DESC LIMIT 1) AS kind,
       (SELECT quiesce_ms(at) FROM quiesce_events
         WHERE run_id = $1 AND scope = $3 AND token = $4 AND kind = 'lease.release_rejected'
         ORDER BY id DESC LIMIT 1) AS relinquished_at`;

/**
 * The wait queue's writes commit without waiting for the WAL flush (synchronous_commit off for
 * that one transaction, set inside the statement). A place in line lost in a crash of the
 * server costs its waiter only its turn, never a lease; and a ticket written right after a
 * release must not make the next holder's acquisition queue behind its flush.
 */
const NO_FLUSH_WAIT = `quick AS (SELECT set_config('synchronous_commit', 'off', true) AS off)`;

/** $1 ticket, $2 the wake-up channel: the next in line may be first now. `n`: whether the
 * ticket was still there (none: a release may have granted it the lease, see HAND_BACK). */
export const DEQUEUE = `
WITH ${NO_FLUSH_WAIT},
d AS (DELETE FROM quiesce_waiters USING quick WHERE id = $1 RETURNING scope)
SELECT count(*)::int AS n FROM d LEFT JOIN LATERAL (SELECT pg_notify($2::text, d.scope)) AS wake ON true`;

/** $1 scope, $2..$11 the owner (ACQUIRE's $3..$12), $12 the lease's TTL (ms), $13 the ticket's,
 * $14 the lease's TTL in words. */
export const ENQUEUE = `
WITH ${NO_FLUSH_WAIT}
INSERT INTO quiesce_waiters (scope, run_id, system, host, pid, pid_start, boot_id, child_pid,
    child_pid_start, command, note, lease_ttl_ms, lease_ttl_words, enqueued_at, expires_at)
SELECT $1::text, $2::text, $3::text, $4::text, $5::integer, $6::text, $7::text, $8::integer,
       $9::text, $10::text, $11::text, $12::bigint, $14::text, clock_timestamp(),
       clock_timestamp() + $13::bigint * interval '1 millisecond' FROM quick
RETURNING id`;

/** $1 ticket, $2 its TTL (ms). */
export const REFRESH_TICKET = `
WITH ${NO_FLUSH_WAIT}
UPDATE quiesce_waiters SET expires_at = clock_timestamp() + $2::bigint * interval '1 millisecond'
  FROM quick WHERE id = $1 RETURNING id`;

export const GET_STATE = `
SELECT key, value, token, quiesce_ms(updated_at) AS updated_at FROM quiesce_state WHERE scope = $1 ORDER BY key`;

export const NOW = "SELECT quiesce_ms(clock_timestamp()) AS now";
