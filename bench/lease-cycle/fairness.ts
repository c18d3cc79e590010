import { fork } from "node:child_process";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { fileURLToPath } from "node:url";
import { fmt, judge, note, table } from "../lib/report.js";
import { epochMs, sleep } from "../lib/timed-loop.js";
import type { Acquisition, ContenderMessage, ParentMessage } from "./contender.js";
import { openTarget, type Target } from "./subjects.js";
import type { HandoffReference } from "./advisory-handoff.js";
import { probeIdleFsync, type IdleFsync } from "../lib/fsync-probe.js";

const CONTENDERS = Number(process.env.BENCH_CONTENDERS ?? 4);
const HOLD_MS = 5;
const SCOPE = "bench:fairness";
const CONTENDER = fileURLToPath(new URL("./contender.js", import.meta.url));
const ADVISORY = fileURLToPath(new URL("./advisory-contender.js", import.meta.url));
const RAW = fileURLToPath(new URL("./raw-contender.js", import.meta.url));
const DOORBELL = fileURLToPath(new URL("./doorbell-contender.js", import.meta.url));

export interface FairnessResult {
  backend: string;
  processes: number;
  holdMs: number;
  seconds: number;
  acquisitions: number;
  perSec: number;
  handoffPct: number;
  meanWaitMs: number;
  p50WaitMs: number;
  p99WaitMs: number;
  maxWaitMs: number;
  maxOverMean: number;
  /**
   * The most acquisitions by others that fell inside one process's wait. In arrival order
   * that is at most the other processes (N-1): the whole line ahead, and nobody who came later.
   */
  maxOvertakes: number;
  /** The slowest release() of the holders the longest wait waited behind, ms. */
  longestWaitSlowestReleaseMs: number;
  /** Time the scope sat free between a release and the next acquisition. */
  meanIdleGapMs: number;
  p50IdleGapMs: number;
  p90IdleGapMs: number;
  /** Where a cycle goes: the hold as slept (the timer's slack included), and release(). */
  meanHoldMs: number;
  meanReleaseMs: number;
  /** release() alone, and the whole handoff (end of one hold to the next holder's start). */
  release: Quantiles;
  handoff: Quantiles;
  /** pg_advisory_lock's handoff in the same run (the reference), if PostgreSQL is reachable. */
  reference: HandoffReference | null;
  /** The same contention through pg_advisory_lock, if PostgreSQL is reachable. */
  lockReference: LockReference | null;
  /** On PostgreSQL: the same handoff with our statements sent by hand (raw-contender.ts). */
  rawReference: RawReference | null;
  /** On PostgreSQL: the same statements, woken by a doorbell in the server (doorbell-contender.ts). */
  doorbellReference: RawReference | null;
  /** The disk right after the run: an fsync after a hold's worth of idle, and back to back. */
  disk: IdleFsync;
  perProcess: Record<string, number>;
  /** Store lease-method calls of all contenders per acquisition, by method. */
  callsPerAcquisition: Record<string, number>;
  /** Time in those calls per acquisition, ms, by method (a wait's watch is open all along). */
  callMsPerAcquisition: Record<string, number>;
  /** CPU (user + system) of all contenders per acquisition, ms. */
  cpuMsPerAcquisition: number;
  refused: number;
  errors: string[];
}

/** 4 processes contend for one scope with `--wait` semantics for `seconds`. */
export async function measureFairness(
  t: Target,
  seconds: number,
  reference: HandoffReference | null,
  lockReference: LockReference | null,
  dir: string,
): Promise<FairnessResult> {
  await (await openTarget(t)).close(); // schema in place before the children race to create it
  const results = await runContenders(CONTENDER, [t.url, SCOPE, String(HOLD_MS)], seconds);
  const byHand = async (script: string, suffix: string) =>
    t.backend === "postgres"
      ? cycleOf(
          analyse(
            t.backend,
            seconds,
            await runContenders(script, [t.url, `${SCOPE}-${suffix}`, String(HOLD_MS)], seconds),
            "token",
          ),
        )
      : null;
  const rawReference = await byHand(RAW, "raw");
  const doorbellReference = await byHand(DOORBELL, "doorbell");
  const disk = await probeIdleFsync(dir, HOLD_MS);
  return {
    ...analyse(t.backend, seconds, results, "token"),
    reference,
    lockReference,
    rawReference,
    doorbellReference,
    disk,
  };
}

/**
 * A reference run's figures: its rate, its handoffs, and where its cycle goes. The raw one runs
 * right after ours, the advisory one before, on the same machine and server.
 */
export interface RawReference {
  perSec: number;
  handoffPct: number;
  p50IdleGapMs: number;
  meanHoldMs: number;
  meanReleaseMs: number;
  meanIdleGapMs: number;
  cpuMsPerAcquisition: number;
  errors: string[];
}

function cycleOf(r: ReturnType<typeof analyse>): RawReference {
  return {
    perSec: r.perSec,
    handoffPct: r.handoffPct,
    p50IdleGapMs: r.p50IdleGapMs,
    meanHoldMs: r.meanHoldMs,
    meanReleaseMs: r.meanReleaseMs,
    meanIdleGapMs: r.meanIdleGapMs,
    cpuMsPerAcquisition: r.cpuMsPerAcquisition,
    errors: r.errors,
  };
}

/**
 * The same contention through PostgreSQL's own lock (advisory-contender.ts): the same number
 * of processes, the same holds, the same machine, measured just before ours. Null without a
 * reachable server.
 */
export interface LockReference extends RawReference {
  /** A `SELECT 1` round trip after the connection sat idle a hold's length, and back to back. */
  roundTrip: { idleP50Ms: number; hotP50Ms: number };
}

export async function measureLockReference(
  pgUrl: string,
  seconds: number,
): Promise<LockReference | null> {
  const roundTrip = await probeRoundTrip(pgUrl);
  if (roundTrip === null) return null;
  const key = String(0x71756966);
  const r = analyse(
    "postgres",
    seconds,
    await runContenders(ADVISORY, [pgUrl, key, String(HOLD_MS)], seconds),
    "acquiredAt",
  );
  return { ...cycleOf(r), roundTrip };
}

/**
 * What one hop to the server and back costs on this machine, hot and after a pause as long as
 * a hold: a handoff is a few such hops in a row (the release, the notice, the re-read), each
 * after the processes involved sat idle for the hold.
 */
async function probeRoundTrip(
  pgUrl: string,
): Promise<{ idleP50Ms: number; hotP50Ms: number } | null> {
  const c = new pg.Client({ connectionString: pgUrl, application_name: "quiesce-bench-rtt" });
  try {
    await c.connect();
  } catch {
    await c.end().catch(() => undefined);
    return null;
  }
  const one = { name: "one", text: "SELECT 1" };
  const idle: number[] = [];
  const hot: number[] = [];
  try {
    for (let i = 0; i < 100; i++) {
      await sleep(HOLD_MS);
      let t = performance.now();
      await c.query(one);
      idle.push(performance.now() - t);
      for (let j = 0; j < 3; j++) await c.query(one);
      t = performance.now();
      await c.query(one);
      hot.push(performance.now() - t);
    }
  } finally {
    await c.end().catch(() => undefined);
  }
  return { idleP50Ms: quantiles(idle).p50, hotP50Ms: quantiles(hot).p50 };
}

/** Forks the contenders, starts them together, and collects their logs after `seconds`. */
async function runContenders(
  script: string,
  args: string[],
  seconds: number,
): Promise<Extract<ContenderMessage, { type: "done" }>[]> {
  const children = Array.from({ length: CONTENDERS }, () =>
    fork(script, args, { stdio: ["ignore", "inherit", "inherit", "ipc"] }),
  );
  const done = children.map(
    (c) =>
      new Promise<Extract<ContenderMessage, { type: "done" }>>((resolve, reject) => {
        c.on("message", (m: ContenderMessage) => {
          if (m.type === "done") resolve(m);
        });
        c.on("exit", (code) =>
          reject(new Error(`contender ${c.pid} exited (${code}) without a log`)),
        );
      }),
  );
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) =>
          c.on("message", (m: ContenderMessage) => m.type === "ready" && resolve()),
        ),
    ),
  );
  const startAt = epochMs() + 200;
  const go: ParentMessage = { type: "go", startAt, endAt: startAt + seconds * 1000 };
  for (const c of children) c.send(go);
  return Promise.all(done);
}

export interface Quantiles {
  p50: number;
  p90: number;
  p99: number;
}

function quantiles(values: number[]): Quantiles {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99) };
}

/** Store calls of all contenders, by method, per acquisition. */
function perAcquisition(
  results: Extract<ContenderMessage, { type: "done" }>[],
  acquisitions: number,
  field: "calls" | "callMs" = "calls",
): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const r of results) {
    for (const [k, n] of Object.entries(r[field] ?? {})) sum[k] = (sum[k] ?? 0) + n;
  }
  for (const k of Object.keys(sum)) sum[k] = sum[k]! / Math.max(1, acquisitions);
  return sum;
}

/**
 * How many acquisitions by other processes fell inside each wait (the log is in token order,
 * so those are the ones between the waiter's previous token and its own), and what the longest
 * wait was spent on: a wait many times the mean with no more than N-1 holders ahead is a slow
 * holder (its release's fsync, on a disk that stalls), not a waiter passed over.
 *
 * Each process's first wait is not counted as passed over: all start within a few ms of the
 * go signal, and a process's first call (cold statements, its first transaction) can take
 * longer than that, so among them the order is whose first write landed first, which the
 * log does not show. Every later wait starts right after the process's own release.
 */
export function overtakes(log: readonly Acquisition[]): {
  maxOvertakes: number;
  slowestReleaseMs: number;
} {
  let maxOvertakes = 0;
  let longest = -1;
  let slowestReleaseMs = NaN;
  const started = new Set<number>();
  for (let i = 0; i < log.length; i++) {
    const a = log[i]!;
    const first = !started.has(a.pid);
    started.add(a.pid);
    let n = 0;
    let slowest = 0;
    for (let j = i - 1; j >= 0 && log[j]!.acquiredAt > a.waitStart; j--) {
      n++;
      slowest = Math.max(slowest, log[j]!.releasedAt - log[j]!.heldUntil);
    }
    if (!first) maxOvertakes = Math.max(maxOvertakes, n);
    const wait = a.acquiredAt - a.waitStart;
    if (wait > longest) {
      longest = wait;
      slowestReleaseMs = slowest;
    }
  }
  return { maxOvertakes, slowestReleaseMs };
}

/** `order`: the log's order of holders, by fencing token (ours) or by acquisition time (the
 * advisory lock has no token; one holder at a time, so the two agree). */
function analyse(
  backend: string,
  seconds: number,
  results: Extract<ContenderMessage, { type: "done" }>[],
  order: "token" | "acquiredAt",
): Omit<
  FairnessResult,
  "reference" | "lockReference" | "rawReference" | "doorbellReference" | "disk"
> {
  const log: Acquisition[] = results.flatMap((r) => r.log).sort((a, b) => a[order] - b[order]);
  let handoffs = 0;
  let gaps = 0;
  const gapList: number[] = [];
  for (let i = 1; i < log.length; i++) {
    if (log[i]!.pid !== log[i - 1]!.pid) handoffs++;
    const gap = log[i]!.acquiredAt - log[i - 1]!.releasedAt;
    gaps += gap;
    gapList.push(gap);
  }
  gapList.sort((a, b) => a - b);
  const gapAt = (q: number) =>
    gapList[Math.min(gapList.length - 1, Math.floor(q * gapList.length))] ?? NaN;
  const waits = log.map((a) => a.acquiredAt - a.waitStart).sort((a, b) => a - b);
  const mean = waits.reduce((s, w) => s + w, 0) / waits.length;
  const at = (q: number) => waits[Math.min(waits.length - 1, Math.floor(q * waits.length))] ?? NaN;
  const span = (log.at(-1)?.releasedAt ?? 0) - (log[0]?.waitStart ?? 0);
  const meanOf = (f: (a: Acquisition) => number) =>
    log.reduce((s, a) => s + f(a), 0) / Math.max(1, log.length);
  const perProcess: Record<string, number> = {};
  for (const a of log) perProcess[a.pid] = (perProcess[a.pid] ?? 0) + 1;
  const max = waits.at(-1) ?? NaN;
  const { maxOvertakes, slowestReleaseMs } = overtakes(log);
  return {
    backend,
    processes: CONTENDERS,
    holdMs: HOLD_MS,
    seconds,
    acquisitions: log.length,
    perSec: (log.length * 1000) / span,
    handoffPct: (100 * handoffs) / Math.max(1, log.length - 1),
    meanWaitMs: mean,
    p50WaitMs: at(0.5),
    p99WaitMs: at(0.99),
    maxWaitMs: max,
    maxOverMean: max / mean,
    maxOvertakes,
    longestWaitSlowestReleaseMs: slowestReleaseMs,
    meanIdleGapMs: gaps / Math.max(1, log.length - 1),
    p50IdleGapMs: gapAt(0.5),
    p90IdleGapMs: gapAt(0.9),
    meanHoldMs: meanOf((a) => a.heldUntil - a.acquiredAt),
    meanReleaseMs: meanOf((a) => a.releasedAt - a.heldUntil),
    release: quantiles(log.map((a) => a.releasedAt - a.heldUntil)),
    handoff: quantiles(log.slice(1).map((a, i) => a.acquiredAt - log[i]!.heldUntil)),
    perProcess,
    callsPerAcquisition: perAcquisition(results, log.length),
    callMsPerAcquisition: perAcquisition(results, log.length, "callMs"),
    cpuMsPerAcquisition: results.reduce((s, r) => s + r.cpuMs, 0) / Math.max(1, log.length),
    refused: results.reduce((s, r) => s + r.refused, 0),
    errors: results.flatMap((r) => (r.error ? [r.error] : [])),
  };
}

export function printFairness(r: FairnessResult): void {
  const name = r.backend === "sqlite" ? "SQLite" : "PostgreSQL";
  const ideal = 1000 / r.holdMs;
  /** A reference's rate beside ours, when it ran. */
  const referenceRow = (label: string, ref: RawReference | null): string[][] =>
    ref === null
      ? []
      : [[label, fmt(ref.perSec, 1), `${fmt(ref.perSec / ideal, 2)}x the hold-time bound`, "", ""]];
  table(
    `2. Fairness, ${name}: ${r.processes} processes, tryAcquire({ wait: "30s" }), hold ${r.holdMs} ms, ${fmt(r.seconds, 1)} s`,
    ["", "ours", "baseline", "target", ""],
    [
      ["acquisitions", fmt(r.acquisitions), "", "", ""],
      [
        "acquisitions/s",
        fmt(r.perSec, 1),
        `${fmt(ideal)} (hold time only)`,
        `>= ${fmt(0.7 * ideal)} (0.7x)`,
        judge(
          "fairness",
          r.backend,
          "acquisitions/s >= 0.7x hold-time bound",
          r.perSec / ideal,
          r.perSec >= 0.7 * ideal,
        ),
      ],
      ...referenceRow("  the same contention through pg_advisory_lock", r.lockReference),
      ...referenceRow("  the same handoff, our SQL sent by hand", r.rawReference),
      ...referenceRow("  the same, woken by a doorbell in the server", r.doorbellReference),
      [
        "handoffs (next holder is another process)",
        `${fmt(r.handoffPct, 1)} %`,
        `${fmt(100 * (1 - 1 / r.processes), 0)} % if random`,
        ">= 90 %",
        judge("fairness", r.backend, "handoffs >= 90%", r.handoffPct, r.handoffPct >= 90),
      ],
      ["wait mean", `${fmt(r.meanWaitMs, 1)} ms`, "", "", ""],
      ["wait p50 / p99", `${fmt(r.p50WaitMs, 1)} / ${fmt(r.p99WaitMs, 1)} ms`, "", "", ""],
      [
        "wait max (slowest release() it waited behind)",
        `${fmt(r.maxWaitMs, 1)} ms = ${fmt(r.maxOverMean, 2)}x mean (${fmt(r.longestWaitSlowestReleaseMs, 1)} ms)`,
        "",
        "",
        "",
      ],
      [
        "most holders inside one wait (passed over if > N-1)",
        fmt(r.maxOvertakes),
        `${fmt(r.processes - 1)} (the others, in arrival order)`,
        `<= ${fmt(r.processes - 1)}`,
        judge(
          "fairness",
          r.backend,
          "no waiter passed over (holders per wait <= N-1)",
          r.maxOvertakes,
          r.maxOvertakes <= r.processes - 1,
        ),
      ],
      [
        "scope idle between holders, median",
        `${fmt(r.p50IdleGapMs, 2)} ms`,
        r.reference ? `${fmt(r.reference.p50Ms, 2)} ms (pg_advisory_lock)` : "-",
        "<= 5 ms",
        judge(
          "fairness",
          r.backend,
          "idle gap median <= 5 ms",
          r.p50IdleGapMs,
          r.p50IdleGapMs <= 5,
        ),
      ],
      [
        "scope idle between holders, p90 / mean",
        `${fmt(r.p90IdleGapMs, 2)} / ${fmt(r.meanIdleGapMs, 2)} ms`,
        r.reference ? `${fmt(r.reference.p90Ms, 2)} ms p90` : "-",
        "",
        "",
      ],
    ],
  );
  note(
    `a cycle, mean: ${fmt(1000 / r.perSec, 2)} ms = hold ${fmt(r.meanHoldMs, 2)} ms (sleep ${r.holdMs} ms and the timer's slack) + release() ${fmt(r.meanReleaseMs, 2)} ms + idle ${fmt(r.meanIdleGapMs, 2)} ms`,
  );
  note(
    `release() median ${fmt(r.release.p50, 2)}, p90 ${fmt(r.release.p90, 2)}, p99 ${fmt(r.release.p99, 2)} ms; handoff (end of a hold to the next holder's start) median ${fmt(r.handoff.p50, 2)}, p90 ${fmt(r.handoff.p90, 2)}, p99 ${fmt(r.handoff.p99, 2)} ms`,
  );
  const lr = r.lockReference;
  if (lr !== null) {
    note(
      `pg_advisory_lock's cycle, same processes and holds: ${fmt(1000 / lr.perSec, 2)} ms = hold ${fmt(lr.meanHoldMs, 2)} + unlock ${fmt(lr.meanReleaseMs, 2)} + idle ${fmt(lr.meanIdleGapMs, 2)} ms; ${fmt(lr.handoffPct, 1)} % handoffs; contenders' CPU per acquisition ${fmt(lr.cpuMsPerAcquisition, 2)} ms`,
    );
    note(
      `a round trip to the server (SELECT 1): ${fmt(lr.roundTrip.idleP50Ms, 2)} ms median after ${r.holdMs} ms idle, ${fmt(lr.roundTrip.hotP50Ms, 2)} ms back to back; our handoff is a release, a notice and a re-read in a row, the lock's an unlock and the server waking the blocked session`,
    );
  }
  const raw = r.rawReference;
  if (raw !== null) {
    note(
      `our SQL sent by hand (the store's ACQUIRE, PEEK, RELEASE; a LISTEN client; no library), same processes and holds: ${fmt(1000 / raw.perSec, 2)} ms = hold ${fmt(raw.meanHoldMs, 2)} + release ${fmt(raw.meanReleaseMs, 2)} + idle ${fmt(raw.meanIdleGapMs, 2)} ms; ${fmt(raw.handoffPct, 1)} % handoffs; contenders' CPU per acquisition ${fmt(raw.cpuMsPerAcquisition, 2)} ms`,
    );
    for (const e of raw.errors) note(`raw contender error: ${e}`);
  }
  const bell = r.doorbellReference;
  if (bell !== null) {
    note(
      `the same statements with a doorbell in the server instead of a notice and a re-read (the holder keeps an advisory lock that its RELEASE gives up before committing; the waiter blocks on it in a function whose FOR KEY SHARE read returns once the grant is durable): ${fmt(1000 / bell.perSec, 2)} ms = hold ${fmt(bell.meanHoldMs, 2)} + release ${fmt(bell.meanReleaseMs, 2)} + idle ${fmt(bell.meanIdleGapMs, 2)} ms; ${fmt(bell.handoffPct, 1)} % handoffs; contenders' CPU per acquisition ${fmt(bell.cpuMsPerAcquisition, 2)} ms`,
    );
    for (const e of bell.errors) note(`doorbell contender error: ${e}`);
  }
  note(
    `the disk just after: an fsync after ${r.disk.pauseMs} ms idle (what each handoff's first commit follows) ${fmt(r.disk.idleMedianUs)} us median, ${fmt(r.disk.idleP90Us)} us p90; back to back ${fmt(r.disk.hotMedianUs)} us`,
  );
  note(
    `acquisitions per process: ${Object.values(r.perProcess).join(", ")}; refusals: ${r.refused}`,
  );
  const calls = Object.entries(r.callsPerAcquisition).sort(([a], [b]) => a.localeCompare(b));
  note(
    `store calls per acquisition, all contenders: ${fmt(
      calls.reduce((s, [, n]) => s + n, 0),
      2,
    )} (${calls.map(([k, n]) => `${k} ${fmt(n, 2)}`).join(", ")}); contenders' CPU per acquisition: ${fmt(r.cpuMsPerAcquisition, 2)} ms`,
  );
  const callMs = Object.entries(r.callMsPerAcquisition)
    .filter(([k]) => k !== "watch") // returns at once; the watch's wait is the wait itself
    .sort(([a], [b]) => a.localeCompare(b));
  if (callMs.length > 0)
    note(
      `time in store calls per acquisition: ${callMs.map(([k, ms]) => `${k} ${fmt(ms, 2)} ms`).join(", ")}`,
    );
  for (const e of r.errors) note(`contender error: ${e}`);
}
