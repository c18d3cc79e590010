/**
 * bench/wave: a 10,000-host wave with a no-op patch command (issue #5).
 *
 * Targets: quiesce's own overhead per host < 2 ms on SQLite; `wave status` on that wave
 * < 100 ms; peak memory reported. How the overhead is separated from the command: the same
 * wave runs (a) with the patch command's spawn replaced by an in-process "exit 0" (every lease,
 * journal write, host state and event still made: that is our cost, and the figure judged), and
 * (b) with `/bin/sh -c true` spawned per host as `--patch true` does; (c) spawning the same
 * command the same way with nothing else around it is the command's own cost, from a bare
 * process and from one holding as much memory as the agent (a fork costs more from a bigger
 * parent). (b) - (c) should come close to (a); all are printed. Every wave runs in its own process (its peak RSS is its
 * own), beside the disk's fsync rate measured in the same run.
 *
 *   npm run bench:wave -- [--hosts N] [--spawn-hosts N] [--batch 10%] [--concurrency 32]
 *                         [--backend sqlite|postgres|all]
 */
import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { openStore } from "../src/store/open-store.js";
import { benchDir, pgQuery, pgUnreachable } from "./lib/bench-env.js";
import { probeFsyncRate } from "./lib/fsync-probe.js";
import { fmt, judge, note, table, verdicts } from "./lib/report.js";
import { REPO, writeResults } from "./lib/results.js";
import { benchFlags } from "./lib/flags.js";

const flag = benchFlags(
  "usage: node dist/bench/wave.js [--hosts N] [--batch N|P%] [--concurrency N] [--spawn-hosts N] [--backend sqlite|postgres|all]",
  ["--hosts", "--batch", "--concurrency", "--spawn-hosts", "--backend"],
);
const hosts = Number(flag("--hosts") ?? 10_000);
const batch = flag("--batch") ?? "10%";
const concurrency = Number(flag("--concurrency") ?? 32);
/** The spawning cross-check is slow (a fork per host) and only a cross-check: fewer hosts. */
const spawnHosts = Math.min(hosts, Number(flag("--spawn-hosts") ?? 2000));
const which = flag("--backend") ?? "all";
if (!(hosts > 0) || !(concurrency > 0) || !["sqlite", "postgres", "all"].includes(which)) {
  process.stderr.write(
    "usage: node dist/bench/wave.js [--hosts N] [--batch N|P%] [--concurrency N] [--backend sqlite|postgres|all]\n",
  );
  process.exit(2);
}
const pgServer = process.env.QUIESCE_BENCH_PG_URL || "postgres://postgres@127.0.0.1:5432/test";
if (!["127.0.0.1", "localhost", "::1", "[::1]"].includes(new URL(pgServer).hostname)) {
  process.stderr.write("wave: the PostgreSQL URL must point at the loopback interface\n");
  process.exit(2);
}
const PG_SCHEMA = "bench_wave";
const CLI = join(REPO, "bin", "quiesce.js");
const startedAt = new Date();
const { dir, cleanup } = benchDir();

interface AgentResult {
  wave: string;
  hosts: number;
  runner: string;
  logs: boolean;
  createMs: number;
  ms: number;
  perHostMs: number;
  cpuPerHostMs: number;
  commits: Record<string, number>;
  commitsPerHost: number;
  /** Statements sent to PostgreSQL per host (0 on SQLite). */
  roundTripsPerHost: number;
  maxRssMb: number;
}

interface SpawnResult {
  ms: number;
  perSpawnMs: number;
  ballastMb: number;
  maxRssMb: number;
}

function spawnRow(label: string, r: SpawnResult): string[] {
  return [label, fmt(r.ms / 1000, 1), fmt(r.perSpawnMs, 3), "", "", "", fmt(r.maxRssMb, 0)];
}

function child<T>(script: string, args: string[]): T {
  const out = execFileSync(
    process.execPath,
    [join(REPO, "dist", "bench", "wave", script), ...args],
    {
      encoding: "utf8",
      maxBuffer: 1 << 24,
    },
  );
  return JSON.parse(out.trim().split("\n").pop()!) as T;
}

function agent(
  url: string,
  wave: string,
  runner: "noop" | "shell",
  logs: boolean,
  n = hosts,
): AgentResult {
  const args = ["--store", url, "--wave", wave, "--hosts", String(n), "--batch", batch];
  args.push("--concurrency", String(concurrency), "--runner", runner);
  if (logs) args.push("--log-dir", join(dir, `logs-${wave}`));
  return child<AgentResult>("agent.js", args);
}

/** Median wall time of a CLI invocation (node start included). */
function cliMs(args: string[], rounds = 5): number {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    const r = spawnSync(process.execPath, [CLI, ...args], { stdio: "ignore" });
    if (r.status !== 0) throw new Error(`quiesce ${args.join(" ")} exited ${r.status}`);
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(rounds / 2)]!;
}

const results: Record<string, unknown> = {};
const skipped: Record<string, string> = {};
console.log(
  `wave: ${hosts} hosts (${spawnHosts} when spawning), batches of ${batch}, concurrency ${concurrency}; backends ${which}; files in ${dir}`,
);
try {
  const fsyncPerSec = probeFsyncRate(dir, 2000);
  const fsyncMs = 1000 / fsyncPerSec;
  console.log(`fsync probe: ${fmt(fsyncPerSec)}/s (${fmt(fsyncMs, 3)} ms per durable write)`);
  for (const b of which === "all"
    ? (["sqlite", "postgres"] as const)
    : [which as "sqlite" | "postgres"]) {
    let url: string;
    if (b === "postgres") {
      const why = await pgUnreachable(pgServer);
      if (why !== null) {
        skipped.postgres = `PostgreSQL at ${pgServer} is not reachable: ${why}`;
        console.log(`\nskipping PostgreSQL: ${skipped.postgres}`);
        continue;
      }
      await pgQuery(pgServer, `DROP SCHEMA IF EXISTS ${PG_SCHEMA} CASCADE`);
      const u = new URL(pgServer);
      u.searchParams.set("schema", PG_SCHEMA);
      url = u.toString();
    } else url = join(dir, "wave.db");
    await (await openStore(url)).close();
    const noop = agent(url, "noop", "noop", false);
    const logged = b === "sqlite" ? agent(url, "logged", "noop", true) : null;
    const shell = b === "sqlite" ? agent(url, "shell", "shell", false, spawnHosts) : null;
    // The command alone, from a bare process and from one as big as the agent that spawned it.
    const spawnArgs = ["spawn", "--n", String(spawnHosts), "--concurrency", String(concurrency)];
    const bare = shell ? child<SpawnResult>("baselines.js", spawnArgs) : null;
    const sized =
      shell && bare
        ? child<SpawnResult>("baselines.js", [
            ...spawnArgs,
            "--ballast-mb",
            String(Math.max(0, Math.round(shell.maxRssMb - bare.maxRssMb))),
          ])
        : null;
    const status = child<{ coldMs: number; medianMs: number; p95Ms: number; maxRssMb: number }>(
      "baselines.js",
      ["status", "--store", url, "--wave", "noop"],
    );
    const cliStatus = cliMs(["wave", "status", "noop", "--json", "--store", url]);
    const cliVersion = cliMs(["--version"]);
    const row = (label: string, r: AgentResult) => [
      label,
      fmt(r.ms / 1000, 1),
      fmt(r.perHostMs, 3),
      fmt(r.cpuPerHostMs, 3),
      fmt(r.commitsPerHost, 2),
      fmt(r.perHostMs / fsyncMs, 2),
      fmt(r.maxRssMb, 0),
    ];
    table(
      `wave [${b}]: ${hosts} hosts to the end, no-op patch (fsync probe ${fmt(fsyncMs, 3)} ms)`,
      [
        "variant",
        "total s",
        "ms/host",
        "cpu ms/host",
        "commits/host",
        "ms/host ÷ probe fsync",
        "peak RSS MB",
      ],
      [
        row("ours, spawn left out (our own cost)", noop),
        ...(logged ? [row("ours, spawn left out, a log file per host", logged)] : []),
        ...(shell ? [row(`ours + \`/bin/sh -c true\` per host (${spawnHosts} hosts)`, shell)] : []),
        ...(bare && sized
          ? [
              spawnRow(`\`/bin/sh -c true\` alone (${spawnHosts}), from a bare process`, bare),
              spawnRow(
                `\`/bin/sh -c true\` alone (${spawnHosts}), from one the agent's size`,
                sized,
              ),
            ]
          : []),
      ],
    );
    if (shell && bare && sized)
      note(
        `spawned minus spawn alone: ${fmt(shell.perHostMs - sized.perSpawnMs, 3)} ms/host against the same-size parent, ${fmt(shell.perHostMs - bare.perSpawnMs, 3)} against a bare one (compare the first row, ${fmt(noop.perHostMs, 3)}); a fork costs more the more memory its parent maps`,
      );
    note(
      `commits per host: ${Object.entries(noop.commits)
        .map(([k, v]) => `${k} ${fmt(v / hosts, 2)}`)
        .join(", ")}`,
    );
    if (b === "postgres")
      note(
        `round trips per host: ${fmt(noop.roundTripsPerHost, 2)} (statements sent, BEGIN and COMMIT included)`,
      );
    table(
      `wave status [${b}] on the ${hosts}-host wave`,
      ["call", "median ms", "p95 ms", "first call ms"],
      [
        [
          "waveStatus() (library)",
          fmt(status.medianMs, 1),
          fmt(status.p95Ms, 1),
          fmt(status.coldMs, 1),
        ],
        ["`quiesce wave status --json` (CLI, node start included)", fmt(cliStatus, 0), "", ""],
        ["`quiesce --version` (node start alone)", fmt(cliVersion, 0), "", ""],
      ],
    );
    if (b === "sqlite") {
      const v = judge(
        "wave",
        b,
        "own overhead per host < 2 ms",
        noop.perHostMs,
        noop.perHostMs < 2,
      );
      note(`${v}: ${fmt(noop.perHostMs, 3)} ms per host of our own (target < 2 ms)`);
      if (logged)
        note(
          `with the CLI's default per-host log file: ${fmt(logged.perHostMs, 3)} ms per host (not judged)`,
        );
    }
    if (b === "postgres") {
      const v = judge("wave", b, "own cost per host <= 2 ms", noop.perHostMs, noop.perHostMs <= 2);
      note(`${v}: ${fmt(noop.perHostMs, 3)} ms per host of our own (target <= 2 ms, issue 12)`);
    }
    const s = judge("wave", b, "wave status < 100 ms", status.medianMs, status.medianMs < 100);
    note(
      `${s}: waveStatus() ${fmt(status.medianMs, 1)} ms median on ${hosts} hosts (target < 100 ms)`,
    );
    note(
      `peak memory: agent ${fmt(noop.maxRssMb, 0)} MB RSS for ${hosts} hosts; status ${fmt(status.maxRssMb, 0)} MB`,
    );
    results[b] = {
      fsyncPerSec,
      noop,
      logged,
      shell,
      status,
      cliStatusMs: cliStatus,
      cliVersionMs: cliVersion,
    };
  }
} finally {
  cleanup();
  if (which !== "sqlite" && skipped.postgres === undefined)
    await pgQuery(pgServer, `DROP SCHEMA IF EXISTS ${PG_SCHEMA} CASCADE`).catch(() => undefined);
}
const misses = verdicts.filter((v) => !v.pass);
console.log(`\nTargets: ${verdicts.length - misses.length} PASS, ${misses.length} MISS`);
const file = writeResults("wave", startedAt, {
  hosts,
  spawnHosts,
  batch,
  concurrency,
  backends: which,
  skipped,
  results,
});
console.log(`JSON: ${file}`);
