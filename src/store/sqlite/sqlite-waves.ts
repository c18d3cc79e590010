import type Database from "better-sqlite3";
import type { EventInput } from "../../domain/event.js";
import type { PruneResult } from "../store.js";
import { fenceFailure } from "../../domain/fencing.js";
import { isHostState, type HostState } from "../../domain/wave-state.js";
import { waveScope } from "../../domain/wave-input.js";
import { leaseFromRow, type LeaseRow } from "../rows.js";
import { waveFencedEvent, waveFromRow, type WaveRow } from "../wave-rows.js";
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
import type { SqliteTx } from "./sqlite-tx.js";
import { eventParams } from "./sqlite-tx.js";
import { prepareWaveStatements, type WaveStatements } from "./wave-statements.js";
import { SqliteWaveAdmin } from "./sqlite-wave-admin.js";

/** A host row as listHosts reads it (raw): the columns in its SELECT's order. */
type HostValues = [
  string,
  string,
  number,
  string | null,
  string,
  number,
  string | null,
  number | null,
  string | null,
  string | null,
  number | null,
  number | null,
  number,
];

/**
 * Waves on SQLite: each call is one transaction on the store's connection (writes `BEGIN
 * IMMEDIATE`, synchronous=FULL: on disk when the call returns), the clock read inside it (I10).
 */
export class SqliteWaves implements WaveStore {
  private readonly q: WaveStatements;
  private readonly tx: SqliteTx;
  /** Retry, delete and prune: rare operator actions, kept apart from the agent's writes. */
  readonly admin: SqliteWaveAdmin;

  constructor(db: Database.Database, tx: SqliteTx) {
    this.q = prepareWaveStatements(db);
    this.tx = tx;
    this.admin = new SqliteWaveAdmin(db);
  }

  retryHosts(name: string, hosts: readonly string[], event: EventInput): Promise<WaveAdminOutcome> {
    return this.write("retry a wave's hosts", (now) => this.admin.retry(name, hosts, event, now));
  }

  deleteWave(name: string, event: EventInput): Promise<WaveAdminOutcome> {
    return this.write("delete a wave", (now) => this.admin.delete(name, event, now));
  }

  /** `store prune` (the Store's method; it lives here beside the other operator actions). */
  prune(olderThanMs: number, event: (r: PruneResult) => EventInput): Promise<PruneResult> {
    return this.write("prune the store", (now) => this.admin.prune(olderThanMs, event, now));
  }

  private read<T>(doing: string, fn: (now: number) => T): Promise<T> {
    return this.tx.read(doing, fn);
  }

  private write<T>(doing: string, fn: (now: number) => T): Promise<T> {
    return this.tx.write(doing, fn);
  }

  create(def: WaveDefinition, hosts: readonly WaveHostInput[]): Promise<CreateWaveOutcome> {
    return this.write("create a wave", (now): CreateWaveOutcome => {
      const inserted = this.q.insertWave.run({
        name: def.name,
        host_count: hosts.length,
        batch_spec: def.batchSpec,
        batch_size: def.batchSize,
        failure_spec: def.failureSpec,
        max_failures: def.maxFailures,
        time_window: def.window,
        max_per_group: def.maxPerGroup,
        now,
      }).changes;
      if (inserted === 0) return { ok: false, reason: "exists", now };
      hosts.forEach((h, i) => this.q.insertHost.run(def.name, h.host, i, h.group, now));
      this.insertEvent(now, def.event);
      return { ok: true, now };
    });
  }

  getWave(name: string) {
    return this.read("read a wave", (now) => {
      const row = this.q.getWave.get(name) as WaveRow | undefined;
      return { wave: row ? waveFromRow(row) : null, now };
    });
  }

  listWaves() {
    return this.read("list waves", (now) => {
      const counts = new Map<string, Partial<Record<HostState, number>>>();
      for (const c of this.q.countHosts.all() as { wave: string; state: HostState; n: number }[]) {
        const m = counts.get(c.wave) ?? {};
        m[c.state] = c.n;
        counts.set(c.wave, m);
      }
      const waves: WaveSummary[] = (this.q.listWaves.all() as WaveRow[]).map((r) => ({
        wave: waveFromRow(r),
        counts: counts.get(r.name) ?? {},
      }));
      return { waves, now };
    });
  }

  listHosts(name: string): Promise<WaveHostRecord[]> {
    return this.read("list a wave's hosts", () =>
      (this.q.listHosts.all(name) as HostValues[]).map(hostFromValues),
    );
  }

  /** listHosts' raw rows, mapped to less: SQLite reads a whole row as fast as part of one. */
  listHostSummaries(name: string): Promise<WaveHostSummary[]> {
    return this.read("list a wave's hosts", () =>
      (this.q.listHosts.all(name) as HostValues[]).map(summaryFromValues),
    );
  }

  apply(writes: readonly WaveWrite[]): Promise<WaveWriteResult[]> {
    if (writes.length === 0) return Promise.resolve([]);
    return this.write("write wave state", (now) => writes.map((w) => this.applyOne(w, now)));
  }

  private applyOne(w: WaveWrite, now: number): WaveWriteResult {
    const scope = waveScope(w.wave);
    const current = leaseFromRow(this.q.getLease.get(scope) as LeaseRow | undefined);
    const fence = fenceFailure(current, w.token, now);
    if (fence !== null) {
      this.insertEvent(now, waveFencedEvent(w, scope, fence));
      return { ok: false, reason: fence, current, now };
    }
    const flags = { start: w.start ? 1 : 0, finish: w.finish ? 1 : 0 };
    const changed =
      w.kind === "host"
        ? this.q.updateHost.run({
            wave: w.wave,
            host: w.host,
            from: w.from,
            to: w.to,
            token: w.token,
            reason: w.reason,
            detail: w.detail,
            run_id: w.runId ?? null,
            ...flags,
            now,
          }).changes
        : this.q.updateWave.run({
            wave: w.wave,
            from: w.from,
            to: w.to,
            token: w.token,
            reason: w.reason,
            settings: w.settings ?? null,
            ...flags,
            now,
          }).changes;
    if (changed === 0) {
      const exists =
        w.kind === "host"
          ? this.q.getHostState.get(w.wave, w.host) !== undefined
          : this.q.getWave.get(w.wave) !== undefined;
      return { ok: false, reason: exists ? "conflict" : "missing", current, now };
    }
    if (w.event) this.insertEvent(now, w.event);
    return { ok: true, now };
  }

  private insertEvent(now: number, e: EventInput): void {
    this.q.insertEvent.run(eventParams(now, e));
  }
}

/** The part of a raw host row (listHosts' column order) that `wave status` shows. */
function summaryFromValues(r: HostValues): WaveHostSummary {
  if (!isHostState(r[4]))
    throw new Error(`host ${r[1]} of wave ${r[0]} has an unknown state "${r[4]}"`);
  return {
    host: r[1],
    group: r[3],
    state: r[4],
    attempts: r[5],
    runId: r[6],
    reason: r[8],
    detail: r[9],
    startedAt: r[10],
    finishedAt: r[11],
  };
}

/** A host row read raw (an array in listHosts' column order) as a record, in one step. */
function hostFromValues(r: HostValues): WaveHostRecord {
  return { wave: r[0], ordinal: r[2], token: r[7], updatedAt: r[12], ...summaryFromValues(r) };
}
