import type Database from "better-sqlite3";
import { sqlPreparedOnFirstUse } from "./prepared-on-first-use.js";

/**
 * True while the run is at :expected_seq and the lease on its scope is held with :fence_token and
 * unexpired at :now: the rule fenceFailure states, as a condition of a write (I3).
 */
const FENCED = `EXISTS (
        SELECT 1 FROM quiesce_runs r JOIN quiesce_leases l ON l.scope = r.scope
         WHERE r.run_id = :run_id AND r.seq = :expected_seq
           AND l.held AND l.token = :fence_token AND l.expires_at > :now)`;

/**
 * The SQLite journal's statements, prepared once per connection (on first use). Every write runs inside one
 * `BEGIN IMMEDIATE` transaction that first checks the lease fence (held, same token, unexpired)
 * and the expected sequence/state: SQLite has one writer at a time, so nothing can change
 * between that check and the write. A transition's fast path folds that check into the write
 * (FENCED) and falls back to check-then-write only to say why a write changed nothing.
 */
const SQL = {
  getLease: "SELECT * FROM quiesce_leases WHERE scope = ?",
  getRun: "SELECT * FROM quiesce_runs WHERE run_id = ?",
  listRuns: `
      SELECT * FROM quiesce_runs
       WHERE (:state IS NULL OR state = :state) AND (:runtime IS NULL OR runtime_id = :runtime)
       ORDER BY updated_at DESC, run_id LIMIT :limit`,
  countRuns: "SELECT state, count(*) AS n FROM quiesce_runs GROUP BY state",
  countEffects: "SELECT state, count(*) AS n FROM quiesce_effects GROUP BY state",
  insertRun: `
      INSERT INTO quiesce_runs (run_id, runtime_id, scope, state, seq, token, checkpoint,
        review_reason, created_at, updated_at)
      VALUES (:run_id, :runtime_id, :scope, 'active', 0, :token, :checkpoint, NULL, :now, :now)`,
  updateRun: `
      UPDATE quiesce_runs
         SET seq = :seq, token = :token, state = coalesce(:state, state),
             checkpoint = CASE WHEN :set_checkpoint THEN :checkpoint ELSE checkpoint END,
             review_reason = CASE WHEN :set_review THEN :review_reason ELSE review_reason END,
             updated_at = :now
       WHERE run_id = :run_id AND seq = :expected_seq`,
  getEffects: "SELECT * FROM quiesce_effects WHERE run_id = ? ORDER BY ordinal, key",
  getEffect: "SELECT * FROM quiesce_effects WHERE run_id = ? AND key = ?",
  insertEffect: `
      INSERT INTO quiesce_effects (run_id, key, ordinal, provider, state, prev_state, seq, attempt,
        token, request, request_id, result, context, review_reason, checksum, created_at, updated_at)
      VALUES (:run_id, :key, :ordinal, :provider, :state, :prev_state, :seq, :attempt,
        :token, :request, :request_id, :result, :context, :review_reason, :checksum, :now, :now)
      ON CONFLICT (run_id, key) DO NOTHING`,
  updateEffect: `
      UPDATE quiesce_effects
         SET ordinal = :ordinal, provider = :provider, state = :state, prev_state = :prev_state,
             seq = :seq, attempt = :attempt, token = :token, request = :request,
             request_id = :request_id, result = :result, context = :context,
             review_reason = :review_reason, checksum = :checksum, updated_at = :now
       WHERE run_id = :run_id AND key = :key AND state = :from`,
  // The fast path of a transition (see sqlite-journal.ts): the fence and the run's sequence
  // are conditions of the write itself, so a write that goes through reads nothing first.
  insertEffectFenced: `
      INSERT INTO quiesce_effects (run_id, key, ordinal, provider, state, prev_state, seq, attempt,
        token, request, request_id, result, context, review_reason, checksum, created_at, updated_at)
      SELECT :run_id, :key, :ordinal, :provider, :state, :prev_state, :seq, :attempt,
        :token, :request, :request_id, :result, :context, :review_reason, :checksum, :now, :now
       WHERE ${FENCED}
      ON CONFLICT (run_id, key) DO NOTHING`,
  updateEffectFenced: `
      UPDATE quiesce_effects
         SET ordinal = :ordinal, provider = :provider, state = :state, prev_state = :prev_state,
             seq = :seq, attempt = :attempt, token = :token, request = :request,
             request_id = :request_id, result = :result, context = :context,
             review_reason = :review_reason, checksum = :checksum, updated_at = :now
       WHERE run_id = :run_id AND key = :key AND state = :from AND ${FENCED}`,
  updateRunFenced: `
      UPDATE quiesce_runs
         SET seq = :seq, token = :token, state = coalesce(:state, state),
             checkpoint = CASE WHEN :set_checkpoint THEN :checkpoint ELSE checkpoint END,
             review_reason = CASE WHEN :set_review THEN :review_reason ELSE review_reason END,
             updated_at = :now
       WHERE run_id = :run_id AND seq = :expected_seq AND ${FENCED}`,
  getRuntime: "SELECT * FROM quiesce_runtimes WHERE runtime_id = ?",
  listRuntimes: "SELECT * FROM quiesce_runtimes ORDER BY runtime_id",
  insertRuntime: `
      INSERT INTO quiesce_runtimes (runtime_id, scope, state, version, incarnation, token, host, pid,
        maintenance_id, accepting_work, active_runs, started_at, deadline_at, policy, note,
        review_reason, updated_at)
      VALUES (:runtime_id, :scope, :state, :version, :incarnation, :token, :host, :pid,
        :maintenance_id, :accepting_work, :active_runs, coalesce(:started_at, :now), :deadline_at,
        :policy, :note, :review_reason, :now)`,
  updateRuntime: `
      UPDATE quiesce_runtimes
         SET scope = :scope, state = :state, version = :version, incarnation = :incarnation,
             token = :token, host = :host, pid = :pid, maintenance_id = :maintenance_id,
             accepting_work = :accepting_work, active_runs = :active_runs,
             started_at = coalesce(:started_at, started_at), deadline_at = :deadline_at,
             policy = :policy, note = :note, review_reason = :review_reason, updated_at = :now,
             req_drain_ms = CASE WHEN req_maintenance_id = :consume THEN NULL ELSE req_drain_ms END,
             req_at = CASE WHEN req_maintenance_id = :consume THEN NULL ELSE req_at END,
             req_by = CASE WHEN req_maintenance_id = :consume THEN NULL ELSE req_by END,
             req_maintenance_id = CASE WHEN req_maintenance_id = :consume THEN NULL ELSE req_maintenance_id END
       WHERE runtime_id = :runtime_id AND version = :expected_version`,
  requestMaintenance: `
      UPDATE quiesce_runtimes
         SET req_maintenance_id = :id, req_drain_ms = :drain_ms, req_at = :now, req_by = :by
       WHERE runtime_id = :runtime_id`,
  deleteRuns: "DELETE FROM quiesce_runs WHERE runtime_id = ?",
  deleteRuntime: "DELETE FROM quiesce_runtimes WHERE runtime_id = ?",
  insertEvent: `
      INSERT INTO quiesce_events (at, kind, scope, token, run_id, host, pid, message, detail)
      VALUES (:at, :kind, :scope, :token, :run_id, :host, :pid, :message, :detail)`,
} as const;

export type JournalStatements = Record<keyof typeof SQL, Database.Statement>;

export function prepareJournalStatements(db: Database.Database): JournalStatements {
  return sqlPreparedOnFirstUse(db, SQL);
}
