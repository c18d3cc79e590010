import type pg from "pg";
import { fenceFailure } from "../../domain/fencing.js";
import type { HostState } from "../../domain/wave-state.js";
import { waveScope } from "../../domain/wave-input.js";
import { leaseFromRow, type LeaseRow } from "../rows.js";
import {
  hostFromRow,
  hostSummaryFromRow,
  waveFencedEvent,
  waveFromRow,
  type WaveHostRow,
  type WaveHostSummaryRow,
  type WaveRow,
} from "../wave-rows.js";
import type {
  CreateWaveOutcome,
  WaveDefinition,
  WaveHostInput,
  WaveHostRecord,
  WaveHostSummary,
  WaveStore,
  WaveSummary,
  WaveWrite,
  WaveAdminOutcome,
  WaveWriteResult,
} from "../wave-store.js";
import { inTransaction, insertEvent, prepareNamed, readRows, type Query } from "./pg-tx.js";

// A wave writes these for every host: named prepared statements.
prepareNamed({
  wave_update_host: sql.UPDATE_HOST,
  wave_update_wave: sql.UPDATE_WAVE,
  wave_diagnose: sql.DIAGNOSE,
  wave_update_hosts: sql.UPDATE_HOSTS,
});
import * as sql from "./pg-wave-statements.js";
import { pgDeleteWave, pgRetryHosts } from "./pg-wave-admin.js";
import type { EventInput } from "../../domain/event.js";
import type { ReleaseRequest } from "../store.js";

/** Waves on PostgreSQL: a batch of writes is one transaction on one pooled connection. */
export class PgWaves implements WaveStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly location: string,
    /** The channel a release notifies waiters on (see PgWakeups). */
    private readonly wakeChannel: string,
  ) {}

  private tx<T>(doing: string, fn: (q: Query) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, this.location, doing, fn);
  }

  private read<R extends pg.QueryResultRow>(
    doing: string,
    text: string,
    params: unknown[] = [],
  ): Promise<R[]> {
    return readRows<R>(this.pool, this.location, doing, text, params);
  }

  async create(def: WaveDefinition, hosts: readonly WaveHostInput[]): Promise<CreateWaveOutcome> {
    return this.tx("create a wave", async (q): Promise<CreateWaveOutcome> => {
      const [row] = await q<{ now: number }>(sql.INSERT_WAVE, [
        def.name,
        hosts.length,
        def.batchSpec,
        def.batchSize,
        def.failureSpec,
        def.maxFailures,
        def.window,
        def.maxPerGroup,
      ]);
      if (!row) {
        const [c] = await q<{ now: number }>("SELECT quiesce_ms(clock_timestamp()) AS now");
        return { ok: false, reason: "exists", now: Number(c!.now) };
      }
      await q(sql.INSERT_HOSTS, [def.name, hosts.map((h) => h.host), hosts.map((h) => h.group)]);
      await insertEvent(q, def.event);
      return { ok: true, now: Number(row.now) };
    });
  }

  async getWave(name: string) {
    const rows = await this.read<WaveRow & { now: number; found: boolean }>(
      "read a wave",
      `SELECT ${sql.WAVE_COLUMNS}, w.name IS NOT NULL AS found, quiesce_ms(clock_timestamp()) AS now
         FROM (SELECT 1) AS one LEFT JOIN quiesce_waves w ON w.name = $1`,
      [name],
    );
    const r = rows[0]!;
    return { wave: r.found ? waveFromRow(r) : null, now: Number(r.now) };
  }

  async listWaves() {
    return this.tx("list waves", async (q) => {
      const [c] = await q<{ now: number }>("SELECT quiesce_ms(clock_timestamp()) AS now");
      const rows = await q<WaveRow>(
        `SELECT ${sql.WAVE_COLUMNS} FROM quiesce_waves w ORDER BY w.created_at DESC, w.name`,
      );
      const counts = new Map<string, Partial<Record<HostState, number>>>();
      const byState = await q<{ wave: string; state: HostState; n: number }>(
        "SELECT wave, state, count(*)::int AS n FROM quiesce_wave_hosts GROUP BY wave, state",
      );
      for (const s of byState) {
        const m = counts.get(s.wave) ?? {};
        m[s.state] = s.n;
        counts.set(s.wave, m);
      }
      const waves: WaveSummary[] = rows.map((r) => ({
        wave: waveFromRow(r),
        counts: counts.get(r.name) ?? {},
      }));
      return { waves, now: Number(c!.now) };
    });
  }

  async listHosts(name: string): Promise<WaveHostRecord[]> {
    const rows = await this.read<WaveHostRow>(
      "list a wave's hosts",
      `SELECT ${sql.HOST_COLUMNS} FROM quiesce_wave_hosts h WHERE h.wave = $1 ORDER BY h.ordinal`,
      [name],
    );
    return rows.map(hostFromRow);
  }

  /** Nine of listHosts' thirteen columns: parsing them is most of the time (see the interface). */
  async listHostSummaries(name: string): Promise<WaveHostSummary[]> {
    const rows = await this.read<WaveHostSummaryRow>(
      "list a wave's hosts",
      `SELECT ${sql.HOST_SUMMARY_COLUMNS} FROM quiesce_wave_hosts h WHERE h.wave = $1 ORDER BY h.ordinal`,
      [name],
    );
    return rows.map((r) => hostSummaryFromRow(name, r));
  }

  retryHosts(name: string, hosts: readonly string[], event: EventInput): Promise<WaveAdminOutcome> {
    return this.tx("retry a wave's hosts", (q) => pgRetryHosts(q, name, hosts, event));
  }

  deleteWave(name: string, event: EventInput): Promise<WaveAdminOutcome> {
    return this.tx("delete a wave", (q) => pgDeleteWave(q, name, event));
  }

  async apply(writes: readonly WaveWrite[]): Promise<WaveWriteResult[]> {
    if (writes.length === 0) return [];
    const hosts = hostBatch(writes);
    if (hosts === null)
      return this.tx("write wave state", async (q) => {
        const out: WaveWriteResult[] = [];
        for (const w of writes) out.push(await applyOne(q, w));
        return out;
      });
    // The whole batch is one statement: it commits on its own (no BEGIN and COMMIT round trips).
    const rows = await this.read<{ ord: string; now: number; released: boolean }>(
      "write wave state",
      sql.UPDATE_HOSTS,
      [...hostBatchParams(hosts), this.wakeChannel],
    );
    const done = new Map(rows.map((r) => [Number(r.ord) - 1, r]));
    const ok = (i: number): WaveWriteResult | null => {
      const r = done.get(i);
      return r === undefined ? null : { ok: true, now: Number(r.now), released: r.released };
    };
    if (done.size === hosts.length) return hosts.map((_, i) => ok(i)!);
    // The others changed nothing: say why, and log a zombie's attempt (refusal()).
    return this.tx("write wave state", async (q) => {
      const out: WaveWriteResult[] = [];
      for (let i = 0; i < hosts.length; i++) out.push(ok(i) ?? (await refusal(q, hosts[i]!)));
      return out;
    });
  }
}

type HostWrite = Extract<WaveWrite, { kind: "host" }>;

/**
 * The batch as host writes of one wave under one token, each host once (UPDATE_HOSTS' one
 * fence and one row per host), or null: then each write is its own statement.
 */
function hostBatch(writes: readonly WaveWrite[]): HostWrite[] | null {
  const first = writes[0]!;
  const seen = new Set<string>();
  for (const w of writes) {
    if (w.kind !== "host" || w.wave !== first.wave || w.token !== first.token) return null;
    if (seen.has(w.host)) return null;
    seen.add(w.host);
  }
  return writes as HostWrite[];
}

function hostBatchParams(ws: readonly HostWrite[]): unknown[] {
  const col = <T>(f: (w: HostWrite) => T) => ws.map(f);
  const ev = <T>(f: (e: EventInput) => T) => ws.map((w) => (w.event ? f(w.event) : null));
  const rel = <T>(f: (r: ReleaseRequest) => T) => ws.map((w) => (w.release ? f(w.release) : null));
  const w0 = ws[0]!;
  return [
    waveScope(w0.wave),
    w0.token,
    w0.wave,
    col((w) => w.host),
    col((w) => w.from),
    col((w) => w.to),
    col((w) => w.reason),
    col((w) => w.detail),
    col((w) => w.runId ?? null),
    col((w) => w.start === true),
    col((w) => w.finish === true),
    col((w) => w.event !== undefined),
    ev((e) => e.kind),
    ev((e) => e.scope),
    ev((e) => e.token),
    ev((e) => e.runId),
    ev((e) => e.host),
    ev((e) => e.pid),
    ev((e) => e.message),
    ev((e) => JSON.stringify(e.detail ?? {})),
    rel((r) => r.scope),
    rel((r) => r.token),
    rel((r) => r.runId),
    rel((r) => r.host),
    rel((r) => r.pid),
    rel((r) => r.reason),
  ];
}

async function applyOne(q: Query, w: WaveWrite): Promise<WaveWriteResult> {
  const scope = waveScope(w.wave);
  const flags = [w.start === true, w.finish === true];
  const rows =
    w.kind === "host"
      ? await q<{ now: number }>(sql.UPDATE_HOST, [
          scope,
          w.token,
          w.wave,
          w.host,
          w.from,
          w.to,
          w.reason,
          w.detail,
          w.runId ?? null,
          ...flags,
        ])
      : await q<{ now: number }>(sql.UPDATE_WAVE, [
          scope,
          w.token,
          w.wave,
          w.from,
          w.to,
          w.reason,
          w.settings ?? null,
          ...flags,
        ]);
  if (rows[0]) {
    if (w.event) await insertEvent(q, w.event);
    return { ok: true, now: Number(rows[0].now) };
  }
  return refusal(q, w);
}

/** Why a write changed nothing; a zombie's attempt is logged (I3). */
async function refusal(q: Query, w: WaveWrite): Promise<WaveWriteResult> {
  const scope = waveScope(w.wave);
  const [d] = await q<LeaseRow & { now: number; found: boolean }>(sql.DIAGNOSE, [
    scope,
    w.wave,
    w.kind === "host" ? w.host : null,
  ]);
  const now = Number(d!.now);
  const current = leaseFromRow(d!.scope === null ? null : d);
  const fence = fenceFailure(current, w.token, now);
  if (fence !== null) {
    await insertEvent(q, waveFencedEvent(w, scope, fence));
    return { ok: false, reason: fence, current, now };
  }
  return { ok: false, reason: d!.found ? "conflict" : "missing", current, now };
}
