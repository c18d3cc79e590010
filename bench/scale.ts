/**
 * bench/scale: what held host leases cost one PostgreSQL server (issue #13, docs/scaling.md).
 *
 * A few keeper processes (each one `Leases` instance = one agent host: one heartbeat keeper,
 * one pool of 4 connections) hold 1,000, 5,000 and 10,000 leases in total through quiesce's
 * own renewal path. Per size, over a fixed window: renewal statements/s and leases renewed/s,
 * the agents' server connections, WAL written (pg_current_wal_lsn), the CPU of the backends
 * serving them (/proc/PID/stat of the pids in pg_stat_activity), of the whole server (every
 * postgres process, cross-check) and of the agents. Two profiles: the default timing (ttl 30s,
 * heartbeat 10s) and a fast one (ttl 3s, heartbeat 1s) whose rates are scaled by 1/10 to the
 * default. An idle window first measures what the shared server does without us.
 *
 *   npm run bench:scale -- [--procs 4] [--sizes 1000,5000,10000] [--window 30]
 *                          [--profiles default,fast] [--fillfactor N]
 *
 * `--fillfactor N` is a what-if: it sets the lease table's fillfactor before any lease is
 * taken (quiesce's migrations leave PostgreSQL's default, 100), to see what free room on each
 * page does to WAL (an update that fits its page is HOT: no index entry).
 */
import { openStore } from "../src/store/open-store.js";
import { pgQuery, pgUnreachable } from "./lib/bench-env.js";
import { note } from "./lib/report.js";
import { writeResults } from "./lib/results.js";
import { sleep } from "./lib/timed-loop.js";
import { sizeFigures, type Profile, type SizeFigures } from "./scale/figures.js";
import { KeeperFleet } from "./scale/fleet.js";
import { printScale } from "./scale/scale-report.js";
import { ServerWatch } from "./scale/server-watch.js";
import { benchFlags } from "./lib/flags.js";

const flag = benchFlags(
  "usage: node dist/bench/scale.js [--procs N] [--sizes 1000,5000] [--window S] [--profiles default,fast] [--fillfactor 10..100]",
  ["--procs", "--sizes", "--window", "--profiles", "--fillfactor"],
);
const procs = Number(flag("--procs") ?? 4);
const sizes = (flag("--sizes") ?? "1000,5000,10000").split(",").map(Number);
const windowS = Number(flag("--window") ?? 30);
const wanted = (flag("--profiles") ?? "default,fast").split(",");
const fillfactor = flag("--fillfactor") === undefined ? null : Number(flag("--fillfactor"));
const pgServer = process.env.QUIESCE_BENCH_PG_URL || "postgres://postgres@127.0.0.1:5432/test";
if (
  !(procs > 0) ||
  !(windowS > 0) ||
  (fillfactor !== null && !(fillfactor >= 10 && fillfactor <= 100)) ||
  sizes.some((n) => !(n > 0)) ||
  !["127.0.0.1", "localhost", "::1", "[::1]"].includes(new URL(pgServer).hostname)
) {
  process.stderr.write(
    "usage: node dist/bench/scale.js [--procs N] [--sizes 1000,5000] [--window S] [--profiles default,fast] (PostgreSQL on loopback only)\n",
  );
  process.exit(2);
}
const SCHEMA = "bench_scale";
/** Past the pool's idle timeout (10 s): the acquisitions' extra connections have closed. */
const SETTLE_MS = 12_000;
const BASELINE_MS = 10_000;
const PROFILES: Profile[] = [
  { name: "default", ttl: "30s", heartbeat: "10s", heartbeatMs: 10_000, windowMs: windowS * 1000 },
  { name: "fast", ttl: "3s", heartbeat: "1s", heartbeatMs: 1000, windowMs: (windowS * 1000) / 3 },
].filter((p) => wanted.includes(p.name));

const startedAt = new Date();
const why = await pgUnreachable(pgServer);
if (why !== null) {
  console.log(`scale: PostgreSQL at ${pgServer} is not reachable (${why}); nothing measured`);
  process.exit(process.env.CI === "true" ? 1 : 0);
}
const u = new URL(pgServer);
u.searchParams.set("schema", SCHEMA);
const storeUrl = u.toString();
await pgQuery(pgServer, `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
await (await openStore(storeUrl)).close(); // creates the schema and its tables
if (fillfactor !== null) {
  await pgQuery(
    pgServer,
    `ALTER TABLE ${SCHEMA}.quiesce_leases SET (fillfactor = ${fillfactor.toFixed(0)})`,
  );
}

const watch = await ServerWatch.open(pgServer, SCHEMA);
const rows: SizeFigures[] = [];
/** The lease table after each profile (cumulative: the profiles share it). */
const tables: Record<string, Awaited<ReturnType<ServerWatch["leaseTable"]>>> = {};

let fleet: KeeperFleet | null = null;
console.log(
  `scale: ${procs} keeper processes, ${sizes.join("/")} leases, windows ${windowS}s (fast: ${windowS / 3}s); schema ${SCHEMA}; lease table fillfactor ${fillfactor ?? "100 (default)"}`,
);
try {
  const baseline = await watch.window([], BASELINE_MS);
  note(
    `WAL of ours from pg_walinspect: ${watch.walInspect ? "yes" : "no (server WAL minus the idle baseline)"}`,
  );
  note(
    `idle baseline (shared server, nothing of ours running): WAL ${(baseline.walBytes / (baseline.ms / 1000)).toFixed(0)} B/s, all postgres CPU ${((100 * baseline.serverCpuMs) / baseline.ms).toFixed(1)}% of a core, other busy sessions ${baseline.otherActiveMean.toFixed(2)}`,
  );
  for (const p of PROFILES) {
    fleet = await KeeperFleet.start(procs, storeUrl, `scale-${p.name}`, p.ttl, p.heartbeat);
    for (const n of sizes) {
      const acquireMs = await fleet.grow(n);
      await sleep(SETTLE_MS);
      const a = await fleet.snapshot();
      const w = await watch.window(fleet.apps, p.windowMs);
      const b = await fleet.snapshot();
      const r = sizeFigures(p, n, acquireMs, a, b, w, baseline);
      rows.push(r);
      note(
        `${p.name} ${n}: acquired in ${(acquireMs / 1000).toFixed(1)}s; ${r.renewedPerS.toFixed(0)} leases renewed/s in ${r.statementsPerS.toFixed(2)} statements/s; lost ${r.lost}`,
      );
    }
    await fleet.stop();
    fleet = null;
    const t = (tables[p.name] = await watch.leaseTable(SCHEMA));
    note(
      `lease table after ${p.name}: ${(t.bytes / 1e6).toFixed(1)} MB with its index (PostgreSQL's statistics: ${t.updates} updates so far, ${t.hotPct.toFixed(0)}% HOT)`,
    );
  }
  printScale(rows, baseline, procs);
  const file = writeResults("scale", startedAt, {
    procs,
    sizes,
    fillfactor,
    settleMs: SETTLE_MS,
    profiles: PROFILES,
    baseline,
    rows,
    leaseTable: tables,
  });
  console.log(`\nresults: ${file}`);
} finally {
  await fleet?.stop();
  await watch.close();
  await pgQuery(pgServer, `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
}
