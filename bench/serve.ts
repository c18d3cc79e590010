/**
 * bench/serve: what `quiesce serve` costs, beside a baseline measured in the same run.
 *
 *  1. With 10,000 leases held and renewed by their holders (another process renews each one
 *     every 10 s, 1,000 renewals a second, so the leases change between requests as a fleet's
 *     do): GET /api/leases and GET /metrics (each a real HTTP request to a real `quiesce serve`
 *     process) against `quiesce lock list --json` (a process per call, as a script would run
 *     it) and against the same read in-process (the store's listLeases and the JSON mapping).
 *     Target: each endpoint under 50 ms at the median. The server's first request, which reads
 *     every lease (later ones read what changed since), is shown beside.
 *  2. 100 open event streams: the server's resident memory with none and with 100, while events
 *     are written (each stream must receive them). Target: under 50 MB more than none.
 *
 *   npm run bench:serve  [-- --backend sqlite|postgres|all] [--leases N]
 *
 * Not in the default `npm run bench` chain: seeding 10,000 leases one commit at a time takes
 * most of a minute per backend.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { leaseJson } from "../src/lease/lease-json.js";
import { openStore } from "../src/store/open-store.js";
import type { Store } from "../src/store/store.js";
import { dropPgSchema, pgStoreUrl, pgUnreachable } from "./lib/bench-env.js";
import { fmt, judge, table, verdicts } from "./lib/report.js";
import { REPO, writeResults } from "./lib/results.js";
import { benchFlags } from "./lib/flags.js";

type Backend = "sqlite" | "postgres";
const arg = benchFlags("usage: node dist/bench/serve.js [--backend sqlite|postgres] [--leases N]", [
  "--backend",
  "--leases",
]);
const backends: Backend[] =
  arg("--backend") === "sqlite" || arg("--backend") === "postgres"
    ? [arg("--backend") as Backend]
    : ["sqlite", "postgres"];
const LEASES = Number(arg("--leases") ?? 10_000);
const STREAMS = 100;
const SAMPLES = 20;
const pgUrl = process.env.QUIESCE_BENCH_PG_URL || "postgres://postgres@127.0.0.1:5432/test";
const CLI = join(REPO, "bin", "quiesce.js");

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.95) - 1)]!;

async function seed(store: Store, n: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const r = await store.leases.acquire({
      scope: `host:bench-${String(i).padStart(5, "0")}`,
      ttlMs: 3_600_000,
      owner: {
        runId: `r-bench-${i}`,
        system: "quiesce",
        host: "bench",
        pid: null,
        pidStart: null,
        bootId: null,
        childPid: null,
        childPidStart: null,
        command: null,
        note: null,
      },
      ticket: null,
    });
    if (!r.ok) throw new Error(`seeding: lease ${i} not acquired (${r.reason})`);
  }
  return performance.now() - t0;
}

function run(args: string[]): Promise<{ ms: number; code: number | null; bytes: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  let bytes = 0;
  child.stdout.on("data", (d: Buffer) => (bytes += d.length));
  return new Promise((resolve) =>
    child.on("exit", (code) => resolve({ ms: performance.now() - t0, code, bytes })),
  );
}

async function startServer(store: string): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(
    process.execPath,
    [CLI, "serve", "--listen", "127.0.0.1:0", "--store", store],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let err = "";
  const base = await new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /serving \S+ store on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.on("exit", () => reject(new Error(`quiesce serve exited: ${err}`)));
  });
  return { child, base };
}

/**
 * CPU time (user + system) a process has used, in ms, from /proc (USER_HZ is 100 on Linux).
 * Beside the wall times: on a shared machine they move with the load, the server's CPU per
 * request much less.
 */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

async function timeGet(
  url: string,
  serverPid: number,
): Promise<{ ms: number[]; firstMs: number; bytes: number; cpuMsPerRequest: number }> {
  const ms: number[] = [];
  let firstMs = 0;
  let bytes = 0;
  let cpu0 = 0;
  for (let i = 0; i < SAMPLES + 2; i++) {
    if (i === 2) cpu0 = cpuMs(serverPid);
    const t0 = performance.now();
    const r = await fetch(url);
    const body = await r.arrayBuffer();
    if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
    if (i === 0) firstMs = performance.now() - t0;
    if (i >= 2) ms.push(performance.now() - t0); // two warm-up requests
    bytes = body.byteLength;
  }
  return { ms, firstMs, bytes, cpuMsPerRequest: (cpuMs(serverPid) - cpu0) / SAMPLES };
}

/** The leases' holders (bench/serve/renewer.ts); `stop` ends them and says how many renewals a second they made. */
async function startRenewer(store: string): Promise<{ stop: () => Promise<number> }> {
  const child = spawn(
    process.execPath,
    [join(REPO, "dist", "bench", "serve", "renewer.js"), store],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", () => out.includes("ready\n") && resolve());
    child.on("exit", (code) => reject(new Error(`renewer exited (${code}) before it was ready`)));
  });
  return {
    stop: async () => {
      const done = new Promise<void>((r) => child.on("exit", () => r()));
      child.kill("SIGTERM");
      await done;
      const last = out.trim().split("\n").pop() ?? "{}";
      return (JSON.parse(last) as { perSec?: number }).perSec ?? 0;
    },
  };
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m![1]) / 1024;
}

/** Opens `n` event streams; resolves with a counter of the events each has received. */
async function openStreams(base: string, n: number) {
  const abort = new AbortController();
  const received = new Array<number>(n).fill(0);
  await Promise.all(
    received.map(async (_, i) => {
      const r = await fetch(`${base}/api/events/stream`, { signal: abort.signal });
      const reader = r.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
      void (async () => {
        const dec = new TextDecoder();
        for (;;) {
          const { value, done } = await reader
            .read()
            .catch((): { value: undefined; done: true } => ({ value: undefined, done: true }));
          if (done) return;
          received[i]! += (dec.decode(value).match(/^id: /gm) ?? []).length;
        }
      })();
    }),
  );
  return { received, close: () => abort.abort() };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function bench(b: Backend, location: string) {
  const store = await openStore(location);
  const seedMs = await seed(store, LEASES);
  console.log(`\n[${b}] ${fmt(LEASES)} leases seeded in ${fmt(seedMs / 1000, 1)} s`);

  const cliMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await run(["lock", "list", "--json", "--store", location]);
    if (r.code !== 0) throw new Error("lock list failed");
    cliMs.push(r.ms);
  }
  const inProc: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t0 = performance.now();
    const { leases, now } = await store.leases.listLeases();
    JSON.stringify({ leases: leases.map((l) => leaseJson(l, now)) });
    inProc.push(performance.now() - t0);
  }

  const srv = await startServer(location);
  try {
    const renewer = await startRenewer(location);
    const api = await timeGet(`${srv.base}/api/leases`, srv.child.pid!);
    const metrics = await timeGet(`${srv.base}/metrics`, srv.child.pid!);
    const renewalsPerSec = await renewer.stop();
    table(
      `[${b}] reads with ${fmt(LEASES)} leases held, ${fmt(renewalsPerSec)} renewals/s meanwhile (ms; ${SAMPLES} requests after 2 warm-ups; load average ${fmt(loadavg()[0], 1)})`,
      ["what", "median", "p95", "server CPU/req", "bytes", "target"],
      [
        [
          "lock list --json (a process each)",
          fmt(median(cliMs), 1),
          fmt(p95(cliMs), 1),
          "-",
          "-",
          "",
        ],
        [
          "listLeases + JSON, in-process",
          fmt(median(inProc), 1),
          fmt(p95(inProc), 1),
          "-",
          "-",
          "",
        ],
        [
          "GET /api/leases, the server's first (every lease read)",
          fmt(api.firstMs, 1),
          "-",
          "-",
          "-",
          "",
        ],
        [
          "GET /api/leases",
          fmt(median(api.ms), 1),
          fmt(p95(api.ms), 1),
          fmt(api.cpuMsPerRequest, 1),
          fmt(api.bytes),
          judge("reads", b, "/api/leases median < 50 ms", median(api.ms), median(api.ms) < 50),
        ],
        [
          "GET /metrics",
          fmt(median(metrics.ms), 1),
          fmt(p95(metrics.ms), 1),
          fmt(metrics.cpuMsPerRequest, 1),
          fmt(metrics.bytes),
          judge("reads", b, "/metrics median < 50 ms", median(metrics.ms), median(metrics.ms) < 50),
        ],
      ],
    );

    await sleep(1000);
    const before = rssMb(srv.child.pid!);
    const streams = await openStreams(srv.base, STREAMS);
    await sleep(2000);
    for (let i = 0; i < 20; i++)
      await store.events.record({
        kind: "lease.renew_failed",
        scope: `bench-${i}`,
        token: null,
        runId: null,
        host: "bench",
        pid: null,
        message: "bench event for the streams",
      });
    await sleep(3000);
    const after = rssMb(srv.child.pid!);
    const delivered = streams.received.filter((n) => n === 20).length;
    streams.close();
    const delta = after - before;
    table(
      `[${b}] ${STREAMS} open event streams`,
      ["what", "RSS MB", "target"],
      [
        ["server, no stream", fmt(before, 1), ""],
        [`server, ${STREAMS} streams, 20 events each`, fmt(after, 1), ""],
        [
          "difference",
          fmt(delta, 1),
          judge("streams", b, "100 streams < 50 MB", delta, delta < 50),
        ],
        [
          "streams that got all 20 events",
          String(delivered),
          judge("streams", b, "every stream got every event", delivered, delivered === STREAMS),
        ],
      ],
    );
    return {
      leases: LEASES,
      seedMs,
      loadAverage: loadavg()[0],
      lockListMs: { median: median(cliMs), p95: p95(cliMs), samples: cliMs },
      inProcessListMs: { median: median(inProc), p95: p95(inProc) },
      renewalsPerSec,
      apiLeasesMs: {
        firstMs: api.firstMs,
        median: median(api.ms),
        p95: p95(api.ms),
        serverCpuMsPerRequest: api.cpuMsPerRequest,
        bytes: api.bytes,
      },
      metricsMs: {
        median: median(metrics.ms),
        p95: p95(metrics.ms),
        serverCpuMsPerRequest: metrics.cpuMsPerRequest,
        bytes: metrics.bytes,
      },
      streams: {
        count: STREAMS,
        rssBeforeMb: before,
        rssAfterMb: after,
        deltaMb: delta,
        delivered,
      },
    };
  } finally {
    srv.child.kill("SIGTERM");
    await store.close();
  }
}

const startedAt = new Date();
const results: Record<string, unknown> = {};
const skipped: Record<string, string> = {};
const dir = mkdtempSync(join(tmpdir(), "quiesce-bench-serve-"));
try {
  for (const b of backends) {
    if (b === "sqlite") results.sqlite = await bench(b, join(dir, "serve.db"));
    else {
      const why = await pgUnreachable(pgUrl);
      if (why) {
        skipped.postgres = `PostgreSQL at ${pgUrl} is not reachable: ${why}`;
        console.log(`\nskipping PostgreSQL: ${skipped.postgres}`);
        continue;
      }
      await dropPgSchema(pgUrl);
      try {
        results.postgres = await bench(b, pgStoreUrl(pgUrl));
      } finally {
        await dropPgSchema(pgUrl);
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const misses = verdicts.filter((v) => !v.pass);
console.log(`\nTargets: ${verdicts.length - misses.length} PASS, ${misses.length} MISS`);
console.log(`results: ${writeResults("serve", startedAt, { results, skipped })}`);
