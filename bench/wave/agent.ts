/**
 * One measured wave, in a process of its own (so its peak memory is its own): creates a wave
 * of --hosts hosts and runs it to the end through the library (`runWave`, the code `quiesce
 * wave run` uses), then prints one JSON line: wall time, commits by kind, peak RSS.
 *
 *   node dist/bench/wave/agent.js --store URL --hosts N --batch 10% --concurrency 32
 *        --runner noop|shell [--log-dir DIR]
 *
 * `--runner noop` replaces only the spawning of the patch command (it "exits 0" at once): every
 * lease, journal write, host state and event is still made. That is quiesce's own cost.
 * `--runner shell` runs `/bin/sh -c true` per host, as the CLI does for `--patch true`.
 */
import { performance } from "node:perf_hooks";
import pg from "pg";
import { Leases } from "../../src/lease/leases.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { createWave } from "../../src/wave/create-wave.js";
import { runWave } from "../../src/wave/run-wave.js";
import { runShell, type CommandRunner } from "../../src/wave/shell-command.js";

const argv = process.argv.slice(2);
const flag = (name: string) => {
  const i = argv.indexOf(name);
  return i === -1 ? undefined : argv[i + 1];
};
const url = flag("--store")!;
const hosts = Number(flag("--hosts") ?? 10_000);
const batch = flag("--batch") ?? "10%";
const concurrency = Number(flag("--concurrency") ?? 32);
const runnerName = flag("--runner") ?? "noop";
const logDir = flag("--log-dir") ?? null;
const name = flag("--wave") ?? `bench-${process.pid}`;

/** Counts the store calls that commit (each one transaction, one fsync on SQLite). */
function counting(store: Store) {
  const c = {
    acquire: 0,
    setChild: 0,
    release: 0,
    renew: 0,
    events: 0,
    waveCommits: 0,
    waveWrites: 0,
    journalCommits: 0,
    journalWrites: 0,
  };
  const wrap = <T extends object>(o: T, m: keyof T, f: (args: unknown[]) => void) => {
    const orig = (o[m] as (...a: unknown[]) => unknown).bind(o);
    (o as Record<keyof T, unknown>)[m] = (...a: unknown[]) => {
      f(a);
      return orig(...a);
    };
  };
  wrap(store.leases, "acquire", () => c.acquire++);
  wrap(store.leases, "setChild", () => c.setChild++);
  wrap(store.leases, "release", () => c.release++);
  wrap(store.leases, "renew", () => c.renew++);
  wrap(store.events, "record", () => c.events++);
  wrap(store.waves, "apply", (a) => {
    c.waveCommits++;
    c.waveWrites += (a[0] as unknown[]).length;
  });
  wrap(store.journal, "apply", (a) => {
    c.journalCommits++;
    c.journalWrites += (a[0] as unknown[]).length;
  });
  return c;
}

/** Everything a real run does around the command (the pid recorded first), minus the command. */
const noop: CommandRunner = async (o) => {
  await o.beforeStart?.(process.pid);
  o.onSpawn?.(process.pid);
  return { exitCode: 0, signal: null, aborted: false };
};

/** Statements sent to PostgreSQL (each a round trip; BEGIN and COMMIT count): every pool and
 * client query goes through Client.prototype.query. Zero on SQLite. */
let roundTrips = 0;
/** PostgreSQL batches the commands' pids of hosts started together (pg-child-pids.ts), and
 * their acquisitions (pg-acquisitions.ts): the statements that make them, which are its
 * setChild and acquire commits. */
let childStatements = 0;
let acquireStatements = 0;
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with its client below
const clientQuery = pg.Client.prototype.query as (this: pg.Client, ...a: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
  roundTrips++;
  const name = (a[0] as { name?: string } | null)?.name;
  if (name === "quiesce_set_child" || name === "quiesce_set_children") childStatements++;
  if (name === "quiesce_acquire" || name === "quiesce_acquire_many") acquireStatements++;
  return clientQuery.apply(this, a);
} as typeof pg.Client.prototype.query;

const store = await openStore(url);
const commits = counting(store);
const leases = new Leases(store);
const text = Array.from(
  { length: hosts },
  (_, i) => `host-${String(i).padStart(5, "0")} group=g${i % 20}`,
).join("\n");
let t = performance.now();
await createWave(store, { name, hosts: text, batch });
const createMs = performance.now() - t;
for (const k of Object.keys(commits) as (keyof typeof commits)[]) commits[k] = 0;
roundTrips = 0;
childStatements = 0;
acquireStatements = 0;
const cpu0 = process.cpuUsage();
t = performance.now();
const r = await runWave(leases, {
  wave: name,
  patch: "true",
  concurrency,
  ttl: "30s",
  runner: runnerName === "shell" ? runShell : noop,
  logDir,
});
const ms = performance.now() - t;
const cpu = process.cpuUsage(cpu0);
const trips = roundTrips;
// On PostgreSQL one commit records the pids (and one the acquisitions) of the hosts that
// started together.
if (trips > 0) {
  commits.setChild = childStatements;
  commits.acquire = acquireStatements;
}
await leases.close();
if (r.outcome !== "completed" || r.counts?.succeeded !== hosts)
  throw new Error(`the wave did not complete: ${r.summary}`);
const n = hosts;
process.stdout.write(
  JSON.stringify({
    wave: name,
    hosts: n,
    batch,
    concurrency,
    runner: runnerName,
    logs: logDir !== null,
    createMs,
    ms,
    perHostMs: ms / n,
    cpuPerHostMs: (cpu.user + cpu.system) / 1000 / n,
    commits,
    commitsPerHost:
      (commits.acquire +
        commits.setChild +
        commits.release +
        commits.renew +
        commits.events +
        commits.waveCommits +
        commits.journalCommits) /
      n,
    roundTripsPerHost: trips / n,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
  }) + "\n",
);
