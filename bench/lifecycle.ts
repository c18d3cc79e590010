/**
 * bench/lifecycle: how long a command under `quiesce run` goes on acting after `run` itself is
 * frozen (SIGSTOP). The deadline guard must end it within TTL + grace + 100 ms of the freeze
 * (issue "The command never outlives the lease"). The command ignores SIGTERM, so what is
 * measured is the worst case: the KILL at the end of the grace. The baseline row is the
 * nominal TTL + grace; the guard acts on the local deadline, a safety margin before the TTL.
 *
 *   npm run build && node dist/bench/lifecycle.js [--runs 7] [--ttl 1000] [--grace 500]
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { benchDir } from "./lib/bench-env.js";
import { fmt, judge, table, verdicts } from "./lib/report.js";
import { REPO, writeResults } from "./lib/results.js";
import { benchFlags } from "./lib/flags.js";

const flag = benchFlags(
  "usage: node dist/bench/lifecycle.js [--runs 7] [--ttl 1000] [--grace 500]",
  ["--runs", "--ttl", "--grace"],
);
const arg = (name: string, fallback: string) => flag(`--${name}`) ?? fallback;
const RUNS = Number(arg("runs", "7"));
const TTL = Number(arg("ttl", "1000"));
const GRACE = Number(arg("grace", "500"));
const CLI = join(REPO, "bin", "quiesce.js");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function once(dir: string, i: number): Promise<number> {
  const ticks = join(dir, `ticks-${i}`);
  // Ignores TERM, writes the time every 10 ms: its last line is its last act.
  const cmd = `trap '' TERM; while :; do date +%s%3N >> ${ticks}; sleep 0.01; done`;
  const p = spawn(
    process.execPath,
    [
      CLI,
      "run",
      "--store",
      join(dir, "q.db"),
      "--lease",
      `s${i}`,
      "--ttl",
      `${TTL}ms`,
      "--grace",
      `${GRACE}ms`,
      "--",
      "sh",
      "-c",
      cmd,
    ],
    { stdio: "ignore" },
  );
  while (!existsSync(ticks)) await sleep(10);
  await sleep(TTL / 2);
  const frozenAt = Date.now();
  process.kill(p.pid!, "SIGSTOP");
  await sleep(TTL + GRACE + 1500);
  const lines = readFileSync(ticks, "utf8").trim().split("\n");
  const last = Number(lines[lines.length - 1]);
  process.kill(p.pid!, "SIGCONT");
  await new Promise((r) => p.once("exit", r));
  return last - frozenAt;
}

const startedAt = new Date();
const { dir, cleanup } = benchDir();
const samples: number[] = [];
try {
  for (let i = 0; i < RUNS; i++) samples.push(await once(dir, i));
} finally {
  cleanup();
}
samples.sort((a, b) => a - b);
const median = samples[Math.floor(samples.length / 2)]!;
const max = samples[samples.length - 1]!;
const bound = TTL + GRACE + 100;
table(
  `freeze of quiesce run -> the command's last act (TTL ${TTL} ms, grace ${GRACE} ms, ${RUNS} runs, SQLite)`,
  ["figure", "ms", "bound", "verdict"],
  [
    [
      "median",
      fmt(median),
      fmt(bound),
      judge("lifecycle", "sqlite", "freeze->death median", median, median <= bound),
    ],
    [
      "max",
      fmt(max),
      fmt(bound),
      judge("lifecycle", "sqlite", "freeze->death max", max, max <= bound),
    ],
    ["baseline: TTL + grace (nominal)", fmt(TTL + GRACE), "", ""],
  ],
);
const file = writeResults("lifecycle", startedAt, {
  ttlMs: TTL,
  graceMs: GRACE,
  samples,
  verdicts,
});
console.log(`\nresults: ${file}`);
