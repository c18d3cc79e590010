/**
 * The PostgreSQL journal's SQL. Each write is one statement: a `fence` CTE locks the run row
 * (FOR UPDATE) and the lease row of its scope (FOR KEY SHARE) only if the lease is held with the
 * writer's token and unexpired on the server's clock (I3, I10) and the run is at the expected
 * sequence; the changes are taken FROM that CTE, so a refused write changes nothing. The key
 * share lock keeps a takeover or new acquisition of the lease from committing in between, and
 * lets its renewal through (migrations/0007_fence_key_share.sql).
 */

export const RUN_COLUMNS = `r.run_id, r.runtime_id, r.scope, r.state, r.seq, r.token, r.checkpoint,
  r.review_reason, quiesce_ms(r.created_at) AS created_at, quiesce_ms(r.updated_at) AS updated_at`;

export const EFFECT_COLUMNS = `e.run_id, e.key, e.ordinal, e.provider, e.state, e.prev_state, e.seq,
  e.attempt, e.token, e.request, e.request_id, e.result, e.context, e.review_reason, e.checksum,
  quiesce_ms(e.created_at) AS created_at, quiesce_ms(e.updated_at) AS updated_at`;

export const RUNTIME_COLUMNS = `t.runtime_id, t.scope, t.state, t.version, t.incarnation, t.token,
  t.host, t.pid, t.maintenance_id, t.accepting_work, t.active_runs,
  quiesce_ms(t.started_at) AS started_at, quiesce_ms(t.deadline_at) AS deadline_at, t.policy,
  t.note, t.review_reason, quiesce_ms(t.updated_at) AS updated_at, t.req_maintenance_id,
  t.req_drain_ms, quiesce_ms(t.req_at) AS req_at, t.req_by`;

/** $1 run_id, $2 runtime_id, $3 scope, $4 token, $5 checkpoint. */
export const CREATE_RUN = `
WITH clock AS (SELECT clock_timestamp() AS now),
fence AS (
  SELECT l.scope FROM quiesce_leases l, clock
   WHERE l.scope = $3 AND l.held AND l.token = $4 AND l.expires_at > clock.now
  FOR KEY SHARE OF l
)
INSERT INTO quiesce_runs (run_id, runtime_id, scope, state, seq, token, checkpoint, review_reason,
    created_at, updated_at)
SELECT $1, $2, $3, 'active', 0, $4, $5, NULL, clock.now, clock.now FROM fence, clock
ON CONFLICT (run_id) DO NOTHING
RETURNING quiesce_ms(created_at) AS now`;

/** $1 run_id, $2 token, $3 expected seq. */
const FENCE = `
fence AS (
  SELECT r.run_id FROM quiesce_runs r JOIN quiesce_leases l ON l.scope = r.scope, clock
   WHERE r.run_id = $1 AND r.seq = $3 AND l.held AND l.token = $2 AND l.expires_at > clock.now
  FOR UPDATE OF r FOR KEY SHARE OF l
)`;

/** $1 run_id, $2 token, $3 expected seq, $4 seq, $5 from state (null: insert), $6 key,
 * $7 ordinal, $8 provider, $9 state, $10 prev_state, $11 attempt, $12 request, $13 request_id,
 * $14 result, $15 context, $16 review_reason, $17 checksum, $18 run state (null: keep),
 * $19 set run review reason, $20 run review reason. */
export const WRITE_EFFECT = `
WITH clock AS (SELECT clock_timestamp() AS now),${FENCE},
ins AS (
  INSERT INTO quiesce_effects (run_id, key, ordinal, provider, state, prev_state, seq, attempt,
      token, request, request_id, result, context, review_reason, checksum, created_at, updated_at)
  SELECT $1, $6, $7, $8, $9, $10, $4, $11, $2, $12, $13, $14, $15, $16, $17, clock.now, clock.now
    FROM fence, clock WHERE $5::text IS NULL
  ON CONFLICT (run_id, key) DO NOTHING
  RETURNING key
),
upd AS (
  UPDATE quiesce_effects e
     SET ordinal = $7, provider = $8, state = $9, prev_state = $10, seq = $4, attempt = $11,
         token = $2, request = $12, request_id = $13, result = $14, context = $15,
         review_reason = $16, checksum = $17, updated_at = clock.now
    FROM fence, clock
   WHERE $5::text IS NOT NULL AND e.run_id = $1 AND e.key = $6 AND e.state = $5::text
  RETURNING e.key
),
run AS (
  UPDATE quiesce_runs r
     SET seq = $4, token = $2, state = coalesce($18::text, r.state),
         review_reason = CASE WHEN $19::boolean THEN $20::text ELSE r.review_reason END,
         updated_at = clock.now
    FROM clock
   WHERE r.run_id = $1 AND EXISTS (SELECT 1 FROM ins UNION ALL SELECT 1 FROM upd)
  RETURNING quiesce_ms(clock.now) AS now
)
SELECT now FROM run`;

/** $1 run_id, $2 token, $3 expected seq, $4 seq, $5 state, $6 set checkpoint, $7 checkpoint,
 * $8 set review reason, $9 review reason. */
export const WRITE_RUN = `
WITH clock AS (SELECT clock_timestamp() AS now),${FENCE}
UPDATE quiesce_runs r
   SET seq = $4, token = $2, state = $5,
       checkpoint = CASE WHEN $6::boolean THEN $7::text ELSE r.checkpoint END,
       review_reason = CASE WHEN $8::boolean THEN $9::text ELSE r.review_reason END,
       updated_at = clock.now
  FROM fence, clock
 WHERE r.run_id = fence.run_id
RETURNING quiesce_ms(clock.now) AS now`;

/** Why a write changed nothing: $1 run_id, $2 effect key, $3 scope (for a run not yet created). */
export const DIAGNOSE = `
SELECT l.scope, l.token, l.held, l.run_id, l.system, l.host, l.pid, l.pid_start, l.boot_id,
       l.child_pid, l.child_pid_start, l.command, l.note, l.ttl_ms,
       quiesce_ms(l.acquired_at) AS acquired_at, quiesce_ms(l.heartbeat_at) AS heartbeat_at,
       quiesce_ms(l.expires_at) AS expires_at, quiesce_ms(clock_timestamp()) AS now,
       r.run_id AS found_run, r.seq AS run_seq, e.state AS effect_state
  FROM (SELECT 1) AS one
  LEFT JOIN quiesce_runs r ON r.run_id = $1
  LEFT JOIN quiesce_leases l ON l.scope = coalesce(r.scope, $3::text)
  LEFT JOIN quiesce_effects e ON e.run_id = $1 AND e.key = $2`;

/** $1 scope, $2 token: is the lease current? Locks it FOR KEY SHARE until commit. */
export const LEASE_FENCE = `
SELECT l.scope FROM quiesce_leases l
 WHERE l.scope = $1 AND l.held AND l.token = $2 AND l.expires_at > clock_timestamp()
FOR KEY SHARE OF l`;

const RUNTIME_FIELDS = `scope = $2, state = $3, version = $4, incarnation = $5, token = $6,
  host = $7, pid = $8, maintenance_id = $9, accepting_work = $10, active_runs = $11,
  started_at = coalesce(to_timestamp($12::bigint / 1000.0), t.started_at),
  deadline_at = to_timestamp($13::bigint / 1000.0), policy = $14, note = $15,
  review_reason = $16, updated_at = clock_timestamp()`;

/** $1..$16 the record (see RUNTIME_FIELDS). */
export const INSERT_RUNTIME = `
INSERT INTO quiesce_runtimes AS t (runtime_id, scope, state, version, incarnation, token, host, pid,
    maintenance_id, accepting_work, active_runs, started_at, deadline_at, policy, note,
    review_reason, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
        coalesce(to_timestamp($12::bigint / 1000.0), clock_timestamp()),
        to_timestamp($13::bigint / 1000.0), $14, $15, $16, clock_timestamp())
ON CONFLICT (runtime_id) DO NOTHING
RETURNING runtime_id`;

/** $1..$16 the record, $17 expected version, $18 request id to clear. */
export const UPDATE_RUNTIME = `
UPDATE quiesce_runtimes t
   SET ${RUNTIME_FIELDS},
       req_drain_ms = CASE WHEN t.req_maintenance_id = $18 THEN NULL ELSE t.req_drain_ms END,
       req_at = CASE WHEN t.req_maintenance_id = $18 THEN NULL ELSE t.req_at END,
       req_by = CASE WHEN t.req_maintenance_id = $18 THEN NULL ELSE t.req_by END,
       req_maintenance_id = CASE WHEN t.req_maintenance_id = $18 THEN NULL ELSE t.req_maintenance_id END
 WHERE t.runtime_id = $1 AND t.version = $17
RETURNING runtime_id`;

/**
 * A batch of effect writes of DISTINCT runs in one statement (one round trip, one plan): the
 * arrays are the columns of WRITE_EFFECT, one element per write. Returns the runs whose write
 * went through; the caller diagnoses the others one by one.
 */
export const WRITE_EFFECTS = `
WITH clock AS (SELECT clock_timestamp() AS now),
w AS (
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[],
                       $7::int[], $8::text[], $9::text[], $10::text[], $11::int[], $12::text[],
                       $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[],
                       $19::boolean[], $20::text[])
    AS w(run_id, token, expected_seq, seq, from_state, key, ordinal, provider, state, prev_state,
         attempt, request, request_id, result, context, review_reason, checksum, run_state,
         set_review, run_review)
),
fence AS (
  SELECT w.* FROM w
    JOIN quiesce_runs r ON r.run_id = w.run_id AND r.seq = w.expected_seq
    JOIN quiesce_leases l ON l.scope = r.scope AND l.held AND l.token = w.token, clock
   WHERE l.expires_at > clock.now
  ORDER BY w.run_id
  FOR UPDATE OF r FOR KEY SHARE OF l
),
ins AS (
  INSERT INTO quiesce_effects (run_id, key, ordinal, provider, state, prev_state, seq, attempt,
      token, request, request_id, result, context, review_reason, checksum, created_at, updated_at)
  SELECT f.run_id, f.key, f.ordinal, f.provider, f.state, f.prev_state, f.seq, f.attempt, f.token,
         f.request, f.request_id, f.result, f.context, f.review_reason, f.checksum, clock.now, clock.now
    FROM fence f, clock WHERE f.from_state IS NULL
  ON CONFLICT (run_id, key) DO NOTHING
  RETURNING run_id
),
upd AS (
  UPDATE quiesce_effects e
     SET ordinal = f.ordinal, provider = f.provider, state = f.state, prev_state = f.prev_state,
         seq = f.seq, attempt = f.attempt, token = f.token, request = f.request,
         request_id = f.request_id, result = f.result, context = f.context,
         review_reason = f.review_reason, checksum = f.checksum, updated_at = clock.now
    FROM fence f, clock
   WHERE f.from_state IS NOT NULL AND e.run_id = f.run_id AND e.key = f.key AND e.state = f.from_state
  RETURNING e.run_id
),
run AS (
  UPDATE quiesce_runs r
     SET seq = f.seq, token = f.token, state = coalesce(f.run_state, r.state),
         review_reason = CASE WHEN f.set_review THEN f.run_review ELSE r.review_reason END,
         updated_at = clock.now
    FROM fence f, clock
   WHERE r.run_id = f.run_id AND f.run_id IN (SELECT run_id FROM ins UNION ALL SELECT run_id FROM upd)
  RETURNING r.run_id, quiesce_ms(clock.now) AS now
)
SELECT run_id, now FROM run`;

/**
 * A batch of run creations of DISTINCT runs in one statement: CREATE_RUN for each row of the
 * arrays ($1 run ids, $2 runtime ids, $3 scopes, $4 tokens, $5 checkpoints). Returns the runs
 * created; the caller diagnoses the others one by one.
 */
export const CREATE_RUNS = `
WITH clock AS (SELECT clock_timestamp() AS now),
w AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[])
    AS w(run_id, runtime_id, scope, token, checkpoint)
),
fence AS (
  SELECT w.* FROM w
    JOIN quiesce_leases l ON l.scope = w.scope AND l.held AND l.token = w.token, clock
   WHERE l.expires_at > clock.now
  ORDER BY w.scope
  FOR KEY SHARE OF l
)
INSERT INTO quiesce_runs (run_id, runtime_id, scope, state, seq, token, checkpoint, review_reason,
    created_at, updated_at)
SELECT f.run_id, f.runtime_id, f.scope, 'active', 0, f.token, f.checkpoint, NULL, clock.now,
       clock.now
  FROM fence f, clock
ON CONFLICT (run_id) DO NOTHING
RETURNING run_id, quiesce_ms(created_at) AS now`;

/**
 * A batch of run writes of DISTINCT runs in one statement: WRITE_RUN for each row of the
 * arrays ($1 run ids, $2 tokens, $3 expected seqs, $4 seqs, $5 states, $6 set checkpoint,
 * $7 checkpoints, $8 set review reason, $9 review reasons). Returns the runs written.
 */
export const WRITE_RUNS = `
WITH clock AS (SELECT clock_timestamp() AS now),
w AS (
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[],
                       $6::boolean[], $7::text[], $8::boolean[], $9::text[])
    AS w(run_id, token, expected_seq, seq, state, set_checkpoint, checkpoint, set_review,
         review_reason)
),
fence AS (
  SELECT w.* FROM w
    JOIN quiesce_runs r ON r.run_id = w.run_id AND r.seq = w.expected_seq
    JOIN quiesce_leases l ON l.scope = r.scope AND l.held AND l.token = w.token, clock
   WHERE l.expires_at > clock.now
  ORDER BY w.run_id
  FOR UPDATE OF r FOR KEY SHARE OF l
)
UPDATE quiesce_runs r
   SET seq = f.seq, token = f.token, state = f.state,
       checkpoint = CASE WHEN f.set_checkpoint THEN f.checkpoint ELSE r.checkpoint END,
       review_reason = CASE WHEN f.set_review THEN f.review_reason ELSE r.review_reason END,
       updated_at = clock.now
  FROM fence f, clock
 WHERE r.run_id = f.run_id
RETURNING r.run_id, quiesce_ms(clock.now) AS now`;
