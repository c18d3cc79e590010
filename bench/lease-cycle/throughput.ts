import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { openFsyncProbe } from "../lib/fsync-probe.js";
import { interleave, perSec, type Contestant, type Tally } from "../lib/interleave.js";
import { runTimes } from "../lib/timed-loop.js";
import { measureJsOverhead, type JsOverhead } from "./js-overhead.js";
import { lockfileCycle } from "./lockfile-cycle.js";
import { pgSqlDrift } from "./raw-pg.js";
import { sqliteSqlDrift } from "./raw-sqlite.js";
import { localSyncs, walSyncs, type Syncs } from "./sync-count.js";
import {
  leasesSubject,
  rawSubject,
  storeSubject,
  targetFor,
  type Subject,
  type Target,
} from "./subjects.js";

const WARMUP = 50;
export const TARGET_RATIO = 0.85;

export type Key = "raw" | "rawPrepared" | "store" | "leases" | "lockfile";
export const LABELS: Record<Key, string> = {
  raw: "raw SQL, same statements",
  rawPrepared: "raw SQL, named prepared statements",
  store: "ours: Store.acquire+release",
  leases: "ours: Leases.acquire+release",
  lockfile: "proper-lockfile lock+unlock",
};

export interface VariantFigures {
  key: Key;
  label: string;
  cycles: number;
  ms: number;
  perSec: number;
  usPerCycle: number;
  perFsync: number;
  /** Durable syncs per cycle actually issued (strace for SQLite, pg_stat_wal for PostgreSQL). */
  syncsPerCycle: number | null;
  walBytesPerCycle: number | null;
  vsRaw: number;
  /** vs raw in each third of the run. */
  vsRawByThird: number[];
}

export interface ThroughputResult {
  backend: string;
  fsyncPerSec: number;
  fsyncPerSecByThird: number[];
  variants: VariantFigures[];
  sqlDrift: string[];
  /** SQLite only: the same cycles on `:memory:`, where only CPU is left. */
  jsOverhead: JsOverhead | null;
}

export interface Opened {
  key: Key;
  subject: Subject;
}

async function openAll(t: Target, dir: string, pgServer: string): Promise<Opened[]> {
  let rawTarget = t;
  if (t.backend === "sqlite") {
    // Its own file with the library's schema, so neither WAL sees the other's checkpoints.
    rawTarget = targetFor("sqlite", dir, pgServer, "raw.db");
    await new SqliteStore(rawTarget.url).close();
  }
  const lock = lockfileCycle(dir);
  const opened: Opened[] = [
    { key: "raw", subject: await rawSubject(rawTarget, "bench:raw") },
    { key: "store", subject: await storeSubject(t, "bench:store") },
    { key: "leases", subject: await leasesSubject(t, "bench:leases") },
    { key: "lockfile", subject: { op: lock, close: () => Promise.resolve() } },
  ];
  if (t.backend === "postgres") {
    opened.splice(1, 0, {
      key: "rawPrepared",
      subject: await rawSubject(t, "bench:raw-prepared", true),
    });
  }
  return opened;
}

/**
 * Uncontended acquire+release cycles per second: ours beside the same statements issued raw,
 * a peer library and the disk's fsync rate, all interleaved cycle by cycle (see interleave()).
 */
export async function measureThroughput(
  t: Target,
  dir: string,
  pgServer: string,
  seconds: number,
): Promise<ThroughputResult> {
  // The library store creates the schema; the raw PostgreSQL client then finds it.
  await (await storeSubject(t, "bench:warm")).close();
  const opened = await openAll(t, dir, pgServer);
  const probe = openFsyncProbe(dir);
  let syncs: Syncs;
  let run: Awaited<ReturnType<typeof interleave>>;
  try {
    for (const o of opened) await runTimes(WARMUP, o.subject.op);
    const contestants: Contestant[] = [
      { key: "probe", op: probe.op, perRound: 2 },
      ...opened.map((o) => ({ key: o.key, op: o.subject.op })),
    ];
    run = await interleave(contestants, seconds * 4000);
    syncs = await localSyncs(t.backend, opened, dir);
  } finally {
    probe.close();
    for (const o of opened) await o.subject.close();
  }
  if (t.backend === "postgres") await walSyncs(t, syncs);
  const fsyncPerSec = perSec(run.totals.get("probe"));
  const rawPerSec = perSec(run.totals.get("raw"));
  const variants = opened.map(({ key }): VariantFigures => {
    const tot = run.totals.get(key)!;
    const ps = perSec(tot);
    return {
      key,
      label: LABELS[key],
      cycles: tot.n,
      ms: tot.ms,
      perSec: ps,
      usPerCycle: (tot.ms * 1000) / tot.n,
      perFsync: ps / fsyncPerSec,
      syncsPerCycle: syncs.get(key)?.syncs ?? null,
      walBytesPerCycle: syncs.get(key)?.walBytes ?? null,
      vsRaw: ps / rawPerSec,
      vsRawByThird: run.thirds.map((m) => ratio(m.get(key), m.get("raw"))),
    };
  });
  const drift = t.backend === "sqlite" ? sqliteSqlDrift(t.url) : pgSqlDrift();
  const jsOverhead = t.backend === "sqlite" ? await measureJsOverhead(1500) : null;
  return {
    backend: t.backend,
    fsyncPerSec,
    fsyncPerSecByThird: run.thirds.map((m) => perSec(m.get("probe"))),
    variants,
    sqlDrift: drift,
    jsOverhead,
  };
}

function ratio(a: Tally | undefined, b: Tally | undefined): number {
  return perSec(a) / perSec(b);
}
