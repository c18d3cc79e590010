/**
 * What the PostgreSQL server spends on the bench's agents over a window, read from the server
 * (WAL position, pg_stat_activity) and from /proc (the server runs on this machine).
 *
 * CPU of the agents' backends: their pids come from pg_stat_activity (by application name);
 * utime+stime of each is read from /proc/PID/stat at the start, every second, and at the end.
 * A backend that appears in the window counts from its start (connecting is part of the cost);
 * one that exits counts up to its last sample. The whole server's CPU (every process named
 * `postgres`) is read too, as a cross-check that includes the WAL writer, the checkpointer and
 * anyone else using the shared server.
 */
import { readdirSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { sleep } from "../lib/timed-loop.js";

const TICKS_PER_S = 100; // CLK_TCK on Linux x86_64
const SAMPLE_MS = 1000;

/** utime+stime of a process in ms, or null when it is gone. */
export function procCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_S;
  } catch {
    return null;
  }
}

/** utime+stime of every process named `postgres` on this machine, ms, by pid. */
export function postgresCpuByPid(): Map<number, number> {
  const out = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!readFileSync(`/proc/${d}/stat`, "utf8").includes("(postgres)")) continue;
    } catch {
      continue;
    }
    const ms = procCpuMs(Number(d));
    if (ms !== null) out.set(Number(d), ms);
  }
  return out;
}

/** CPU the postgres processes used between two readings; one that exited in between is lost. */
function cpuSince(before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0;
  for (const [pid, cpu] of after) ms += cpu - (before.get(pid) ?? 0);
  return ms;
}

export interface WindowFigures {
  ms: number;
  walBytes: number;
  /** WAL records touching the bench schema's relations, and the commit records of their
   * transactions (pg_walinspect): what the agents wrote, without anyone else's WAL. */
  ours: OurWal | null;
  /** CPU of the backends serving the agents, ms. */
  backendCpuMs: number;
  /** CPU of all postgres processes, ms (cross-check, includes other users of the server; a
   * process that exited within the window is left out). */
  serverCpuMs: number;
  connectionsMean: number;
  connectionsMax: number;
  /** Distinct backends seen serving the agents (more than the max: sessions were reopened). */
  backendsSeen: number;
  /** Mean number of other client sessions busy at a sample: the server was shared this much. */
  otherActiveMean: number;
}

export interface OurWal {
  records: number;
  bytes: number;
  /** Of `bytes`: full-page images (the first change of a page after a checkpoint). */
  fpiBytes: number;
  commits: number;
  commitBytes: number;
  /** Heap updates of the bench schema's rows, and how many of them were HOT (no index entry). */
  updates: number;
  hotUpdates: number;
}

export class ServerWatch {
  private constructor(
    private readonly client: pg.Client,
    /** The schema pg_walinspect was installed in, or null when it is not available. */
    private readonly inspect: string | null,
  ) {}

  /** Installs pg_walinspect into `schema` (dropped with it) when the server has it. */
  static async open(serverUrl: string, schema: string): Promise<ServerWatch> {
    const client = new pg.Client({
      connectionString: serverUrl,
      application_name: "quiesce-bench-scale-monitor",
    });
    await client.connect();
    let inspect: string | null = schema;
    try {
      await client.query(`CREATE EXTENSION IF NOT EXISTS pg_walinspect WITH SCHEMA ${schema}`);
    } catch {
      inspect = null;
    }
    return new ServerWatch(client, inspect);
  }

  get walInspect(): boolean {
    return this.inspect !== null;
  }

  close(): Promise<void> {
    return this.client.end();
  }

  async lsn(): Promise<string> {
    const r = await this.client.query<{ l: string }>("SELECT pg_current_wal_lsn()::text AS l");
    return r.rows[0]!.l;
  }

  private async flushLsn(): Promise<string> {
    const r = await this.client.query<{ l: string }>(
      "SELECT pg_current_wal_flush_lsn()::text AS l",
    );
    return r.rows[0]!.l;
  }

  /** The WAL between two flushed positions that belongs to the bench schema's relations. */
  private async ourWal(from: string, to: string): Promise<OurWal | null> {
    if (this.inspect === null) return null;
    if ((await this.walDiff(to, from)) <= 0) {
      // Nothing was written (pg_walinspect refuses an empty range).
      return {
        records: 0,
        bytes: 0,
        fpiBytes: 0,
        commits: 0,
        commitBytes: 0,
        updates: 0,
        hotUpdates: 0,
      };
    }
    const r = await this.client.query<Record<keyof OurWal, string>>(
      `WITH rels AS (
         SELECT array_agg(relfilenode) AS ids FROM pg_class
          WHERE relnamespace = $3::regnamespace AND relfilenode <> 0),
       w AS (SELECT * FROM ${this.inspect}.pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)),
       mine AS (
         SELECT w.* FROM w, rels WHERE EXISTS (
           SELECT 1 FROM regexp_matches(w.block_ref, 'rel [0-9]+/[0-9]+/([0-9]+)', 'g') m
            WHERE m[1]::oid = ANY (rels.ids))),
       commits AS (
         SELECT * FROM w WHERE resource_manager = 'Transaction'
            AND xid IN (SELECT xid FROM mine WHERE xid <> '0'))
       SELECT (SELECT count(*) FROM mine)::text AS records,
              (SELECT coalesce(sum(record_length), 0) FROM mine)::text AS bytes,
              (SELECT coalesce(sum(fpi_length), 0) FROM mine)::text AS "fpiBytes",
              (SELECT count(*) FROM commits)::text AS commits,
              (SELECT coalesce(sum(record_length), 0) FROM commits)::text AS "commitBytes",
              (SELECT count(*) FROM mine WHERE resource_manager = 'Heap'
                  AND record_type LIKE '%UPDATE%')::text AS updates,
              (SELECT count(*) FROM mine WHERE resource_manager = 'Heap'
                  AND record_type LIKE 'HOT_UPDATE%')::text AS "hotUpdates"`,
      [from, to, this.inspect],
    );
    const row = r.rows[0]!;
    return {
      records: Number(row.records),
      bytes: Number(row.bytes),
      fpiBytes: Number(row.fpiBytes),
      commits: Number(row.commits),
      commitBytes: Number(row.commitBytes),
      updates: Number(row.updates),
      hotUpdates: Number(row.hotUpdates),
    };
  }

  async walDiff(to: string, from: string): Promise<number> {
    const r = await this.client.query<{ d: string }>(
      "SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::text AS d",
      [to, from],
    );
    return Number(r.rows[0]!.d);
  }

  /** Measures for `ms` while the agents named `apps` run (an empty list: an idle baseline). */
  async window(apps: readonly string[], ms: number): Promise<WindowFigures> {
    const first = new Map<number, number>();
    const last = new Map<number, number>();
    const conns: number[] = [];
    const others: number[] = [];
    let unreadable = 0;
    const sample = async (initial: boolean) => {
      const r = await this.client.query<{ pid: number; ours: boolean }>(
        `SELECT pid, application_name = ANY($1) AS ours FROM pg_stat_activity
          WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
            AND (application_name = ANY($1) OR state = 'active')`,
        [apps],
      );
      let n = 0;
      let other = 0;
      for (const row of r.rows) {
        if (!row.ours) {
          other++;
          continue;
        }
        n++;
        const cpu = procCpuMs(row.pid);
        if (cpu === null) {
          unreadable++; // the server is not on this machine (or the backend just left)
          continue;
        }
        if (!first.has(row.pid)) first.set(row.pid, initial ? cpu : 0);
        last.set(row.pid, cpu);
      }
      conns.push(n);
      others.push(other);
    };
    const lsn0 = await this.lsn();
    const flush0 = await this.flushLsn();
    const server0 = postgresCpuByPid();
    const t0 = performance.now();
    await sample(true);
    while (performance.now() - t0 < ms - SAMPLE_MS / 2) {
      await sleep(Math.min(SAMPLE_MS, ms - (performance.now() - t0)));
      await sample(false);
    }
    const elapsed = performance.now() - t0;
    const server1 = postgresCpuByPid();
    const walBytes = await this.walDiff(await this.lsn(), lsn0);
    const ours = await this.ourWal(flush0, await this.flushLsn());
    let backendCpuMs = 0;
    for (const [pid, cpu] of last) backendCpuMs += cpu - (first.get(pid) ?? 0);
    // No backend of ours found in /proc at all: the figure is unknown, not zero.
    if (last.size === 0 && unreadable > 0) backendCpuMs = NaN;
    const mean = (a: number[]) => a.reduce((s, x) => s + x, 0) / Math.max(1, a.length);
    return {
      ms: elapsed,
      walBytes,
      ours,
      backendCpuMs,
      serverCpuMs: cpuSince(server0, server1),
      connectionsMean: mean(conns),
      connectionsMax: Math.max(0, ...conns),
      backendsSeen: last.size,
      otherActiveMean: mean(others),
    };
  }

  /** Size of the lease table and how many of its updates were HOT (no index write). */
  async leaseTable(schema: string): Promise<{ bytes: number; hotPct: number; updates: number }> {
    const r = await this.client.query<{ bytes: string; upd: string; hot: string }>(
      `SELECT pg_total_relation_size(relid)::text AS bytes, n_tup_upd::text AS upd,
              n_tup_hot_upd::text AS hot
         FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'quiesce_leases'`,
      [schema],
    );
    const row = r.rows[0];
    if (!row) return { bytes: NaN, hotPct: NaN, updates: NaN };
    const upd = Number(row.upd);
    return { bytes: Number(row.bytes), updates: upd, hotPct: (100 * Number(row.hot)) / upd };
  }
}
