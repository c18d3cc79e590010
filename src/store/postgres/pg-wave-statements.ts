import { wakeHead } from "./pg-statements.js";

/**
 * The PostgreSQL waves' SQL. Every write is one statement whose `fence` CTE locks the wave's
 * lease row FOR KEY SHARE only if it is held with the writer's token and unexpired on the server's
 * clock (I3, I10); the change is taken FROM that CTE, so a refused write changes nothing, and
 * the lock keeps a takeover or release of the lease from committing in between, and lets its
 * renewal through (migrations/0007_fence_key_share.sql). The UPDATE is a
 * compare-and-swap on the state the writer saw.
 */

export const WAVE_COLUMNS = `w.name, w.host_count, w.batch_spec, w.batch_size, w.failure_spec,
  w.max_failures, w.time_window, w.max_per_group, w.state, w.reason, w.token, w.settings,
  quiesce_ms(w.created_at) AS created_at, quiesce_ms(w.started_at) AS started_at,
  quiesce_ms(w.finished_at) AS finished_at, quiesce_ms(w.updated_at) AS updated_at`;

export const HOST_COLUMNS = `h.wave, h.host, h.ordinal, h.grp, h.state, h.attempts, h.run_id,
  h.token, h.reason, h.detail, quiesce_ms(h.started_at) AS started_at,
  quiesce_ms(h.finished_at) AS finished_at, quiesce_ms(h.updated_at) AS updated_at`;

/** What `wave status` reads of a host (WaveHostSummary). */
export const HOST_SUMMARY_COLUMNS = `h.host, h.grp, h.state, h.attempts, h.run_id, h.reason, h.detail,
  quiesce_ms(h.started_at) AS started_at, quiesce_ms(h.finished_at) AS finished_at`;

/** $1 name, $2 host count, $3 batch spec, $4 batch size, $5 failure spec, $6 max failures,
 * $7 window, $8 max per group. */
export const INSERT_WAVE = `
INSERT INTO quiesce_waves (name, host_count, batch_spec, batch_size, failure_spec, max_failures,
    time_window, max_per_group, state, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'created', clock_timestamp(), clock_timestamp())
ON CONFLICT (name) DO NOTHING
RETURNING quiesce_ms(created_at) AS now`;

/** $1 wave, $2 hosts, $3 groups: every host pending, in the arrays' order. */
export const INSERT_HOSTS = `
INSERT INTO quiesce_wave_hosts (wave, host, ordinal, grp, state, attempts, updated_at)
SELECT $1, h.host, h.ord - 1, h.grp, 'pending', 0, clock_timestamp()
  FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS h(host, grp, ord)`;

const FENCE = `
clock AS (SELECT clock_timestamp() AS now),
fence AS (
  SELECT l.scope FROM quiesce_leases l, clock
   WHERE l.scope = $1 AND l.held AND l.token = $2 AND l.expires_at > clock.now
  FOR KEY SHARE OF l
)`;

/** $1 lease scope, $2 token, $3 wave, $4 host, $5 from, $6 to, $7 reason, $8 detail, $9 run id
 * (null keeps), $10 start, $11 finish. */
export const UPDATE_HOST = `
WITH ${FENCE}
UPDATE quiesce_wave_hosts h
   SET state = $6, token = $2, reason = $7, detail = $8, run_id = coalesce($9::text, h.run_id),
       attempts = h.attempts + CASE WHEN $10::boolean THEN 1 ELSE 0 END,
       started_at = CASE WHEN $10::boolean THEN clock.now ELSE h.started_at END,
       finished_at = CASE WHEN $11::boolean THEN clock.now WHEN $10::boolean THEN NULL
                          ELSE h.finished_at END,
       updated_at = clock.now
  FROM fence, clock
 WHERE h.wave = $3 AND h.host = $4 AND h.state = $5
RETURNING quiesce_ms(clock.now) AS now`;

/** $1 lease scope, $2 token, $3 wave, $4 from, $5 to, $6 reason, $7 settings (null keeps),
 * $8 start, $9 finish. */
export const UPDATE_WAVE = `
WITH ${FENCE}
UPDATE quiesce_waves w
   SET state = $5, token = $2, reason = $6, settings = coalesce($7::text, w.settings),
       started_at = CASE WHEN $8::boolean THEN clock.now ELSE w.started_at END,
       finished_at = CASE WHEN $9::boolean THEN clock.now WHEN $8::boolean THEN NULL
                          ELSE w.finished_at END,
       updated_at = clock.now
  FROM fence, clock
 WHERE w.name = $3 AND w.state = $4
RETURNING quiesce_ms(clock.now) AS now`;

/** Why a write changed nothing: $1 lease scope, $2 wave, $3 host (null for a wave write). */
export const DIAGNOSE = `
SELECT l.scope, l.token, l.held, l.run_id, l.system, l.host, l.pid, l.pid_start, l.boot_id,
       l.child_pid, l.child_pid_start, l.command, l.note, l.ttl_ms,
       quiesce_ms(l.acquired_at) AS acquired_at, quiesce_ms(l.heartbeat_at) AS heartbeat_at,
       quiesce_ms(l.expires_at) AS expires_at, quiesce_ms(clock_timestamp()) AS now,
       CASE WHEN $3::text IS NULL THEN EXISTS (SELECT 1 FROM quiesce_waves WHERE name = $2)
            ELSE EXISTS (SELECT 1 FROM quiesce_wave_hosts WHERE wave = $2 AND host = $3)
       END AS found
  FROM (SELECT 1) AS one LEFT JOIN quiesce_leases l ON l.scope = $1`;

/**
 * Several hosts of one wave under one token, and their events, in ONE statement (one round
 * trip, and one commit when it is the whole batch): UPDATE_HOST for each row of the arrays,
 * behind one fence. A row whose host is not in the state its writer saw changes nothing and
 * writes no event; the ordinals of the rows that went through are returned.
 * $1 lease scope, $2 token, $3 wave, then one array element per write: $4 host, $5 from,
 * $6 to, $7 reason, $8 detail, $9 run id (null keeps), $10 start, $11 finish, $12 has an
 * event, and the event's $13 kind, $14 scope, $15 token, $16 run id, $17 host, $18 pid,
 * $19 message, $20 detail (JSON text); the host lease to release with the write (null: none):
 * $21 scope, $22 token, $23 run id, $24 host, $25 pid, $26 reason; $27 the wake channel.
 * A release is RELEASE's (its event, the first waiter in line notified), made only for a write
 * that went through (`released` says so).
 */
export const UPDATE_HOSTS = `
WITH ${FENCE},
w AS (
  SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
      $10::boolean[], $11::boolean[], $12::boolean[], $13::text[], $14::text[], $15::bigint[],
      $16::text[], $17::text[], $18::integer[], $19::text[], $20::text[], $21::text[],
      $22::bigint[], $23::text[], $24::text[], $25::integer[], $26::text[])
    WITH ORDINALITY AS w(host, from_state, to_state, reason, detail, run_id, start, finish,
      has_event, ev_kind, ev_scope, ev_token, ev_run_id, ev_host, ev_pid, ev_message, ev_detail,
      rel_scope, rel_token, rel_run_id, rel_host, rel_pid, rel_reason, ord)
),
upd AS (
  UPDATE quiesce_wave_hosts h
     SET state = w.to_state, token = $2, reason = w.reason, detail = w.detail,
         run_id = coalesce(w.run_id, h.run_id),
         attempts = h.attempts + CASE WHEN w.start THEN 1 ELSE 0 END,
         started_at = CASE WHEN w.start THEN clock.now ELSE h.started_at END,
         finished_at = CASE WHEN w.finish THEN clock.now WHEN w.start THEN NULL
                            ELSE h.finished_at END,
         updated_at = clock.now
    FROM w, fence, clock
   WHERE h.wave = $3 AND h.host = w.host AND h.state = w.from_state
  RETURNING w.ord
),
ev AS (
  INSERT INTO quiesce_events (at, kind, scope, token, run_id, host, pid, message, detail)
  SELECT clock.now, w.ev_kind, w.ev_scope, w.ev_token, w.ev_run_id, w.ev_host, w.ev_pid,
         w.ev_message, w.ev_detail::jsonb
    FROM w JOIN upd ON upd.ord = w.ord, clock
   WHERE w.has_event
   ORDER BY w.ord
),
rel AS (
  UPDATE quiesce_leases l
     SET held = false, run_id = NULL, system = NULL, host = NULL, pid = NULL, pid_start = NULL,
         boot_id = NULL, child_pid = NULL, child_pid_start = NULL, command = NULL, note = NULL,
         ttl_ms = NULL, acquired_at = NULL, heartbeat_at = NULL, expires_at = NULL,
         expiry_reported = false, prev_owner = NULL, takeover_evidence = NULL
    FROM w JOIN upd ON upd.ord = w.ord, clock
   WHERE w.rel_scope IS NOT NULL AND l.scope = w.rel_scope AND l.token = w.rel_token AND l.held
     AND l.expires_at > clock.now
  RETURNING l.scope, w.ord
),
rel_ev AS (
  INSERT INTO quiesce_events (at, kind, scope, token, run_id, host, pid, message, detail)
  SELECT clock.now, 'lease.released', w.rel_scope, w.rel_token, w.rel_run_id, w.rel_host,
         w.rel_pid, 'released: ' || w.rel_reason, jsonb_build_object('reason', w.rel_reason)
    FROM w JOIN rel ON rel.ord = w.ord, clock
   ORDER BY w.ord
)
SELECT upd.ord, quiesce_ms(clock.now) AS now, rel.scope IS NOT NULL AS released
  FROM upd CROSS JOIN clock LEFT JOIN rel ON rel.ord = upd.ord
  LEFT JOIN LATERAL (${wakeHead("$27")}) AS wake ON true`;
