/**
 * bench/takeover: a holder is SIGKILLed at a random point of its heartbeat cycle while a waiter
 * waits in line; we measure kill -> the waiter holds the lease (proof of death included), on
 * each backend, beside proper-lockfile with `stale` equal to our TTL in the same run.
 *
 * Targets (issue "Stale takeover with proof of death"): never earlier than last heartbeat + TTL
 * on the store clock (zero early takeovers over all kills); median within TTL + one poll
 * interval + 100 ms.
 *
 *   npm run build && node dist/bench/takeover.js [--kills 50] [--ttl 2000] [--backend sqlite|postgres|all]
 */
import { join } from "node:path";
import { benchDir, pgUnreachable } from "./lib/bench-env.js";
import { fmt, judge, note, progress, table, verdicts } from "./lib/report.js";
import { writeResults } from "./lib/results.js";
import { exited, nextLine, startScript } from "./takeover/processes.js";
import { benchFlags } from "./lib/flags.js";

const POLL_MS = 50; // the library's default --wait poll interval
const flag = benchFlags(
  "usage: node dist/bench/takeover.js [--kills 50] [--ttl 2000] [--backend sqlite|postgres|all]",
  ["--kills", "--ttl", "--backend"],
);
const arg = (name: string, fallback: string) => flag(`--${name}`) ?? fallback;
const KILLS = Number(arg("kills", "50"));
// 2 s: proper-lockfile raises any `stale` below 2 s to 2 s, and the baseline uses stale = TTL.
const TTL = Number(arg("ttl", "2000"));
const BACKEND = arg("backend", "all");
const PG = process.env.QUIESCE_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sample {
  killToHoldMs: number;
  /** Store clock: takeover time minus the previous owner's expiry. Negative = early. */
  afterExpiryMs: number | null;
  basis: string | null;
}

async function oneKill(store: string, scope: string): Promise<Sample> {
  const holder = startScript("holder", [store, scope, `${TTL}ms`]);
  const ready = await nextLine(holder.lines, "holder");
  const heartbeat = Number(ready.split(" ")[1]);
  const waiter = startScript("waiter", [store, scope, `${TTL}ms`, "60s"]);
  await nextLine(waiter.lines, "waiter");
  await sleep(100 + Math.random() * heartbeat); // a random point of the heartbeat cycle
  const killAt = Date.now();
  holder.child.kill("SIGKILL");
  const got = JSON.parse(await nextLine(waiter.lines, "waiter")) as {
    gotAt: number;
    acquiredAt: number;
    previousExpiresAt: number | null;
    basis: string | null;
  };
  await Promise.all([exited(holder.child), exited(waiter.child)]);
  return {
    killToHoldMs: got.gotAt - killAt,
    afterExpiryMs: got.previousExpiresAt === null ? null : got.acquiredAt - got.previousExpiresAt,
    basis: got.basis,
  };
}

async function oneLockfileKill(file: string): Promise<number> {
  const holder = startScript("lockfile-peer", ["hold", file, String(TTL)]);
  await nextLine(holder.lines, "lockfile holder");
  const waiter = startScript("lockfile-peer", ["wait", file, String(TTL), String(POLL_MS)]);
  await nextLine(waiter.lines, "lockfile waiter");
  await sleep(100 + Math.random() * (TTL / 2));
  const killAt = Date.now();
  holder.child.kill("SIGKILL");
  const got = JSON.parse(await nextLine(waiter.lines, "lockfile waiter")) as { gotAt: number };
  await Promise.all([exited(holder.child), exited(waiter.child)]);
  return got.gotAt - killAt;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? NaN
    : s.length % 2
      ? s[(s.length - 1) / 2]!
      : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

const startedAt = new Date();
const tmp = benchDir();
const results: Record<string, unknown> = { kills: KILLS, ttlMs: TTL, pollMs: POLL_MS };
const rows: string[][] = [];
try {
  const backends: { name: string; store: (i: number) => string }[] = [];
  if (BACKEND === "all" || BACKEND === "sqlite")
    backends.push({ name: "sqlite", store: () => join(tmp.dir, "takeover.db") });
  if (BACKEND === "all" || BACKEND === "postgres") {
    const why = await pgUnreachable(PG);
    if (why) note(`postgres skipped: ${why}`);
    else {
      const u = new URL(PG);
      u.searchParams.set("schema", "bench_takeover");
      backends.push({ name: "postgres", store: () => u.toString() });
    }
  }
  for (const b of backends) {
    const samples: Sample[] = [];
    for (let i = 0; i < KILLS; i++) {
      samples.push(await oneKill(b.store(i), `bench:takeover:${i}`));
      progress(`${b.name}: kills`, i + 1, KILLS);
    }
    const k2h = samples.map((s) => s.killToHoldMs);
    const early = samples.filter((s) => s.afterExpiryMs === null || s.afterExpiryMs < 0).length;
    const med = median(k2h);
    const limit = TTL + POLL_MS + 100;
    rows.push([
      `quiesce ${b.name}`,
      fmt(med),
      fmt(pct(k2h, 0.9)),
      fmt(Math.max(...k2h)),
      fmt(med / TTL, 2),
      String(early),
      `${judge("takeover", b.name, "zero early takeovers", early, early === 0)} / ${judge("takeover", b.name, `median <= ${limit} ms`, med, med <= limit)}`,
    ]);
    results[b.name] = {
      samples,
      medianMs: med,
      p90Ms: pct(k2h, 0.9),
      maxMs: Math.max(...k2h),
      early,
      minAfterExpiryMs: Math.min(...samples.map((s) => s.afterExpiryMs ?? -Infinity)),
      bases: [...new Set(samples.map((s) => s.basis))],
    };
  }
  const lf: number[] = [];
  for (let i = 0; i < KILLS; i++) {
    lf.push(await oneLockfileKill(join(tmp.dir, `peer-${i}`)));
    progress("proper-lockfile: kills", i + 1, KILLS);
  }
  rows.push([
    "proper-lockfile (stale = TTL)",
    fmt(median(lf)),
    fmt(pct(lf, 0.9)),
    fmt(Math.max(...lf)),
    fmt(median(lf) / TTL, 2),
    "n/a",
    "no proof of death",
  ]);
  results.properLockfile = { samplesMs: lf, medianMs: median(lf) };
  table(
    `kill -> waiter holds the lease (TTL ${TTL} ms, poll ${POLL_MS} ms, ${KILLS} kills each)`,
    ["subject", "median ms", "p90 ms", "max ms", "median/TTL", "early", "targets"],
    rows,
  );
  note("early = taken over before the dead owner's last heartbeat + TTL on the store clock");
  note(
    "quiesce's median includes the probes (local process, run activity) and the compare-and-swap",
  );
  const file = writeResults("takeover", startedAt, { ...results, verdicts });
  note(`results: ${file}`);
} finally {
  tmp.cleanup();
}
