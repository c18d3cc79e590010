import type pg from "pg";
import { fenceFailure } from "../../domain/fencing.js";
import { maintenanceEvent } from "../journal-events.js";
import {
  effectFromRow,
  requestRefusal,
  runFromRow,
  runtimeFromRow,
  type EffectRow,
  type RunRow,
  type RuntimeRow,
} from "../journal-rows.js";
import {
  type JournalResult,
  type JournalCounts,
  type JournalStore,
  type JournalWrite,
  type MaintenanceRequestInput,
  type MaintenanceRequestOutcome,
  type ResolveOutcome,
  type ResolveRequest,
  type RunFilter,
  type RunSnapshot,
  type RuntimePut,
} from "../journal-store.js";
import { leaseFromRow } from "../rows.js";
import * as sql from "./pg-journal-statements.js";
import { applyWrites, isOneStatement, type DiagnoseRow } from "./pg-journal-writes.js";
import { inTransaction, insertEvent, onConnection, readRows, type Query } from "./pg-tx.js";

/**
 * The journal on PostgreSQL. A batch of writes is one transaction on one pooled connection
 * (one WAL flush for all of them); each write is one statement fenced in its WHERE clause.
 */
export class PgJournal implements JournalStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly location: string,
  ) {}

  /** Runs `fn` in one transaction on one connection; rolls back on any error. */
  private tx<T>(doing: string, fn: (q: Query) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, this.location, doing, fn);
  }

  private read<R extends pg.QueryResultRow>(
    doing: string,
    text: string,
    params: unknown[],
  ): Promise<R[]> {
    return readRows<R>(this.pool, this.location, doing, text, params);
  }

  /**
   * A group commit's writes, in one commit. When they go in a single statement (most batches:
   * one write, or effects of distinct runs), that statement is the transaction: no BEGIN and
   * no COMMIT, two round trips fewer of the three a batch took (a wave host's journal work is
   * about two batches; a lone agent's effect is four). A batch of several statements, or with
   * an event (which commits with the change it records), keeps its transaction: one WAL flush
   * for all of it, never more flushes than round trips saved.
   */
  async apply(writes: readonly JournalWrite[]): Promise<JournalResult[]> {
    if (writes.length === 0) return [];
    if (writes.some((w) => w.event !== undefined) || !isOneStatement(writes))
      return this.tx("write the journal", (q) => applyWrites(q, writes, "transaction"));
    return onConnection(this.pool, this.location, "write the journal", (q) =>
      applyWrites(q, writes, "autocommit"),
    );
  }

  async getRun(runId: string): Promise<RunSnapshot | null> {
    return this.tx("read a run", async (q) => {
      const [run] = await q<RunRow & { now: number }>(
        `SELECT ${sql.RUN_COLUMNS}, quiesce_ms(clock_timestamp()) AS now FROM quiesce_runs r WHERE r.run_id = $1`,
        [runId],
      );
      if (!run) return null;
      const effects = await q<EffectRow>(
        `SELECT ${sql.EFFECT_COLUMNS} FROM quiesce_effects e WHERE e.run_id = $1 ORDER BY e.ordinal, e.key`,
        [runId],
      );
      return { run: runFromRow(run), effects: effects.map(effectFromRow), now: run.now };
    });
  }

  async stateCounts(): Promise<JournalCounts> {
    const rows = await this.read<{ what: string; state: string; n: string }>(
      "count runs and effects",
      `SELECT 'runs' AS what, state, count(*) AS n FROM quiesce_runs GROUP BY state
       UNION ALL SELECT 'effects', state, count(*) FROM quiesce_effects GROUP BY state`,
      [],
    );
    const out: JournalCounts = { runs: {}, effects: {} };
    for (const r of rows) out[r.what as keyof JournalCounts][r.state] = Number(r.n);
    return out;
  }

  async listRuns(filter: RunFilter) {
    const rows = await this.read<RunRow & { now: number }>(
      "list runs",
      `SELECT ${sql.RUN_COLUMNS}, quiesce_ms(clock_timestamp()) AS now FROM quiesce_runs r
        WHERE ($1::text IS NULL OR r.state = $1) AND ($2::text IS NULL OR r.runtime_id = $2)
        ORDER BY r.updated_at DESC, r.run_id LIMIT $3`,
      [filter.state ?? null, filter.runtimeId ?? null, filter.limit ?? 1000],
    );
    return { runs: rows.map(runFromRow), now: rows[0]?.now ?? (await this.now()) };
  }

  private async now(): Promise<number> {
    const [r] = await this.read<{ now: number }>(
      "read the clock",
      "SELECT quiesce_ms(clock_timestamp()) AS now",
      [],
    );
    return r!.now;
  }

  async resolve(req: ResolveRequest): Promise<ResolveOutcome> {
    return this.tx("resolve an effect", async (q): Promise<ResolveOutcome> => {
      const [cur] = await q<{ seq: number; checksum: string; state: string; now: number }>(
        `SELECT r.seq, e.checksum, e.state, quiesce_ms(clock_timestamp()) AS now
           FROM quiesce_runs r JOIN quiesce_effects e ON e.run_id = r.run_id AND e.key = $2
          WHERE r.run_id = $1 FOR UPDATE`,
        [req.runId, req.key],
      );
      if (!cur) return { ok: false, reason: "missing", now: await this.now() };
      if (cur.seq !== req.expectedSeq || cur.checksum !== req.expectedChecksum)
        return { ok: false, reason: "conflict", now: cur.now };
      const e = req.effect;
      await q(
        `UPDATE quiesce_effects SET state = $3, prev_state = $4, seq = $5, attempt = $6, token = $7,
            request_id = $8, result = $9, context = $10, review_reason = $11, checksum = $12,
            updated_at = clock_timestamp()
          WHERE run_id = $1 AND key = $2`,
        [
          e.runId,
          e.key,
          e.state,
          e.prevState,
          e.seq,
          e.attempt,
          e.token,
          e.requestId,
          e.result,
          e.context,
          e.reviewReason,
          e.checksum,
        ],
      );
      await q(
        `UPDATE quiesce_runs SET seq = $2, state = $3, review_reason = $4, updated_at = clock_timestamp()
          WHERE run_id = $1`,
        [req.runId, req.seq, req.runState, req.runReviewReason],
      );
      await insertEvent(q, req.event);
      return { ok: true, now: cur.now };
    });
  }

  async getRuntime(runtimeId: string) {
    const rows = await this.read<RuntimeRow & { now: number }>(
      "read a runtime",
      `SELECT ${sql.RUNTIME_COLUMNS}, quiesce_ms(clock_timestamp()) AS now
         FROM (SELECT 1) AS one LEFT JOIN quiesce_runtimes t ON t.runtime_id = $1`,
      [runtimeId],
    );
    const row = rows[0]!;
    return { runtime: row.runtime_id === null ? null : runtimeFromRow(row), now: row.now };
  }

  async listRuntimes() {
    const rows = await this.read<RuntimeRow>(
      "list runtimes",
      `SELECT ${sql.RUNTIME_COLUMNS} FROM quiesce_runtimes t ORDER BY t.runtime_id`,
      [],
    );
    return { runtimes: rows.map(runtimeFromRow), now: await this.now() };
  }

  async putRuntime(req: RuntimePut): Promise<JournalResult> {
    const r = req.record;
    return this.tx("write the runtime record", async (q): Promise<JournalResult> => {
      const fenced = await q(sql.LEASE_FENCE, [r.scope, req.token]);
      if (fenced.length === 0) {
        const [d] = await q<DiagnoseRow>(sql.DIAGNOSE, [null, null, r.scope]);
        const current = leaseFromRow(d!.scope === null ? null : d);
        const reason = fenceFailure(current, req.token, d!.now) ?? "not_held";
        return { ok: false, reason, current, now: d!.now };
      }
      const params = [
        r.runtimeId,
        r.scope,
        r.state,
        r.version,
        r.incarnation,
        r.token,
        r.host,
        r.pid,
        r.maintenanceId,
        r.acceptingWork,
        r.activeRuns,
        r.startedAt,
        r.deadlineAt,
        JSON.stringify(r.policy),
        r.note,
        r.reviewReason,
      ];
      const rows =
        req.expectedVersion === null
          ? await q(sql.INSERT_RUNTIME, params)
          : await q(sql.UPDATE_RUNTIME, [...params, req.expectedVersion, req.consumeRequest]);
      const now = await this.clock(q);
      if (rows.length === 0) {
        const [exists] = await q("SELECT 1 FROM quiesce_runtimes WHERE runtime_id = $1", [
          r.runtimeId,
        ]);
        return { ok: false, reason: exists ? "conflict" : "missing", current: null, now };
      }
      if (req.event) await insertEvent(q, req.event);
      return { ok: true, now };
    });
  }

  private async clock(q: Query): Promise<number> {
    const [c] = await q<{ now: number }>("SELECT quiesce_ms(clock_timestamp()) AS now");
    return c!.now;
  }

  async requestMaintenance(req: MaintenanceRequestInput): Promise<MaintenanceRequestOutcome> {
    return this.tx("request maintenance", async (q): Promise<MaintenanceRequestOutcome> => {
      const select = `SELECT ${sql.RUNTIME_COLUMNS} FROM quiesce_runtimes t WHERE t.runtime_id = $1`;
      const [row] = await q<RuntimeRow>(`${select} FOR UPDATE`, [req.runtimeId]);
      if (!row) return { ok: false, reason: "unknown_runtime", runtime: null };
      const rt = runtimeFromRow(row);
      const refusal = requestRefusal(rt, req.maintenanceId);
      if (refusal === "repeated") return { ok: true, runtime: rt, repeated: true };
      if (refusal !== null) return { ok: false, reason: refusal, runtime: rt };
      await q(
        `UPDATE quiesce_runtimes SET req_maintenance_id = $2, req_drain_ms = $3,
            req_at = clock_timestamp(), req_by = $4 WHERE runtime_id = $1`,
        [req.runtimeId, req.maintenanceId, req.drainTimeoutMs, req.by],
      );
      await insertEvent(q, maintenanceEvent(rt, req));
      const [after] = await q<RuntimeRow>(select, [req.runtimeId]);
      return { ok: true, runtime: runtimeFromRow(after!), repeated: false };
    });
  }

  async purgeRuntime(runtimeId: string): Promise<number> {
    return this.tx("delete a runtime's records", async (q) => {
      const runs = await q("DELETE FROM quiesce_runs WHERE runtime_id = $1 RETURNING run_id", [
        runtimeId,
      ]);
      await q("DELETE FROM quiesce_runtimes WHERE runtime_id = $1", [runtimeId]);
      return runs.length;
    });
  }
}
