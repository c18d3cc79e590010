import type Database from "better-sqlite3";
import type { EventInput } from "../../domain/event.js";
import { hostRunId, waveRuntimeId, waveScope } from "../../domain/wave-input.js";
import { leaseFromRow, type LeaseRow } from "../rows.js";
import type { PruneResult } from "../store.js";
import type { WaveAdminOutcome } from "../wave-store.js";
import { eventParams } from "./sqlite-tx.js";
import { withHosts } from "../wave-rows.js";

/**
 * Operator actions on waves (retry, delete) and `store prune` on SQLite. Each runs inside the
 * caller's `BEGIN IMMEDIATE` transaction: SQLite has one writer, so the check that no agent
 * holds the wave's lease cannot be overtaken by an acquisition before the change commits.
 */
const SQL = {
  getLease: "SELECT * FROM quiesce_leases WHERE scope = ?",
  waveState: "SELECT state FROM quiesce_waves WHERE name = ?",
  retryHost: `UPDATE quiesce_wave_hosts
      SET state = 'pending', reason = :reason, detail = NULL, finished_at = NULL, updated_at = :now
    WHERE wave = :wave AND host = :host AND state = 'failed'`,
  deleteRun: "DELETE FROM quiesce_runs WHERE run_id = ?",
  reopenWave: `UPDATE quiesce_waves SET state = 'stopped', reason = :reason, finished_at = NULL,
      updated_at = :now WHERE name = :wave AND state = 'completed'`,
  hostRuns: "SELECT run_id FROM quiesce_wave_hosts WHERE wave = ? AND run_id IS NOT NULL",
  deleteWave: "DELETE FROM quiesce_waves WHERE name = ?",
  deleteRuntime: "DELETE FROM quiesce_runtimes WHERE runtime_id = ?",
  countEffects: `SELECT count(*) AS n FROM quiesce_effects WHERE run_id IN (SELECT run_id
      FROM quiesce_runs WHERE state IN ('completed', 'failed') AND updated_at < ?)`,
  pruneRuns: "DELETE FROM quiesce_runs WHERE state IN ('completed', 'failed') AND updated_at < ?",
  pruneWaves:
    "DELETE FROM quiesce_waves WHERE state = 'completed' AND coalesce(finished_at, updated_at) < ?",
  pruneEvents: "DELETE FROM quiesce_events WHERE at < ?",
  insertEvent: `INSERT INTO quiesce_events (at, kind, scope, token, run_id, host, pid, message, detail)
      VALUES (:at, :kind, :scope, :token, :run_id, :host, :pid, :message, :detail)`,
} as const;

export class SqliteWaveAdmin {
  private readonly q: Record<keyof typeof SQL, Database.Statement>;

  constructor(db: Database.Database) {
    this.q = Object.fromEntries(
      Object.entries(SQL).map(([k, sql]) => [k, db.prepare(sql)]),
    ) as Record<keyof typeof SQL, Database.Statement>;
  }

  /** Null when the change may go ahead, else the refusal. */
  private refusal(name: string, now: number): WaveAdminOutcome | null {
    if (this.q.waveState.get(name) === undefined)
      return { ok: false, reason: "missing", holder: null, now };
    const holder = leaseFromRow(this.q.getLease.get(waveScope(name)) as LeaseRow | undefined);
    if (holder !== null && holder.expiresAt > now)
      return { ok: false, reason: "running", holder, now };
    return null;
  }

  retry(name: string, hosts: readonly string[], event: EventInput, now: number): WaveAdminOutcome {
    const refused = this.refusal(name, now);
    if (refused) return refused;
    const retried: string[] = [];
    for (const host of hosts) {
      const reason = "put back to pending by wave retry";
      if (this.q.retryHost.run({ wave: name, host, reason, now }).changes === 0) continue;
      this.q.deleteRun.run(hostRunId(name, host));
      retried.push(host);
    }
    if (retried.length > 0) {
      const reason = `${retried.length} failed host(s) put back to pending by wave retry`;
      this.q.reopenWave.run({ wave: name, reason, now });
      this.q.insertEvent.run(eventParams(now, withHosts(event, retried)));
    }
    return { ok: true, hosts: retried, now };
  }

  delete(name: string, event: EventInput, now: number): WaveAdminOutcome {
    const refused = this.refusal(name, now);
    if (refused) return refused;
    const runs = (this.q.hostRuns.all(name) as { run_id: string }[]).map((r) => r.run_id);
    for (const r of runs) this.q.deleteRun.run(r);
    this.q.deleteWave.run(name); // hosts: ON DELETE CASCADE
    this.q.deleteRuntime.run(waveRuntimeId(name));
    this.q.insertEvent.run(eventParams(now, event));
    return { ok: true, hosts: [], now };
  }

  prune(olderThanMs: number, event: (r: PruneResult) => EventInput, now: number): PruneResult {
    const before = now - olderThanMs;
    const effects = (this.q.countEffects.get(before) as { n: number }).n;
    const r: PruneResult = {
      runs: this.q.pruneRuns.run(before).changes,
      effects,
      waves: this.q.pruneWaves.run(before).changes,
      events: this.q.pruneEvents.run(before).changes,
      before,
    };
    this.q.insertEvent.run(eventParams(now, event(r)));
    return r;
  }
}
