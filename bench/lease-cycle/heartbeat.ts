import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { nextMessage as nextChildMessage } from "../lib/child-message.js";
import { walStats, type WalStats } from "../lib/bench-env.js";
import { probeFsyncRate } from "../lib/fsync-probe.js";
import { countBetween, straceAvailable, traceFsyncs, type FsyncTrace } from "../lib/strace.js";
import { sleep } from "../lib/timed-loop.js";
import type { HolderCommand, HolderMessage, Snapshot } from "./holder.js";
import { openTarget, type Target } from "./subjects.js";

const HOLDER = fileURLToPath(new URL("./holder.js", import.meta.url));
/** Two heartbeats: batches of leases acquired at different moments merge by then. */
const SETTLE_MS = 2500;
/** PostgreSQL backends report WAL counters when idle at most once a second, else 10 s later
 * (PGSTAT_IDLE_INTERVAL): wait until the acquisitions' counts are in before the first reading. */
const PG_SETTLE_MS = 10_500;

export interface HolderFigures {
  leases: number;
  acquireMs: number;
  firstTenthMsEach: number;
  lastTenthMsEach: number;
  maxRenewGapWhileAcquiringMs: number;
  windowMs: number;
  ticks: number;
  itemsPerTick: number;
  renewMsPerTick: number;
  maxRenewMs: number;
  /** fsync+fdatasync calls of the holder per tick (strace; SQLite only). */
  fsyncsPerTick: number | null;
  /** The server's WAL syncs per tick (pg_stat_wal; PostgreSQL only, server-wide). */
  walSyncsPerTick: number | null;
  walBytesPerTick: number | null;
  /** Renew time per tick divided by the probe's time per fsync. */
  fsyncEquivPerTick: number;
  fsyncPerSec: number;
  cpuPct: number;
  /** CPU used while Store.renew was in flight, as % of the holder's CPU in the window. */
  renewCpuSharePct: number;
  lost: number;
  lostReasons: string[];
}

export interface HeartbeatResult {
  backend: string;
  small: HolderFigures;
  large: HolderFigures;
}

export async function measureHeartbeat(
  t: Target,
  pgServer: string,
  dir: string,
  seconds: number,
): Promise<HeartbeatResult> {
  await (await openTarget(t)).close();
  const trace = t.backend === "sqlite" && straceAvailable();
  const small = await runHolder(t, pgServer, dir, "hb1k", 1000, seconds * 2000, trace);
  const large = await runHolder(t, pgServer, dir, "hb10k", 10_000, (seconds * 10_000) / 3, false);
  return { backend: t.backend, small, large };
}

async function runHolder(
  t: Target,
  pgServer: string,
  dir: string,
  prefix: string,
  count: number,
  windowMs: number,
  strace: boolean,
): Promise<HolderFigures> {
  const child = fork(HOLDER, [t.url, prefix, String(count)], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  try {
    const acquired = await nextMessage(child, "acquired", 300_000);
    const settle = t.backend === "postgres" ? PG_SETTLE_MS : SETTLE_MS;
    await sleep(settle / 2);
    const fsyncPerSec = probeFsyncRate(dir, 1000);
    await sleep(settle / 2);
    let tracer: FsyncTrace | null = null;
    if (strace) tracer = await traceFsyncs(child.pid!, dir);
    const a = await snapshot(child);
    const walA = t.backend === "postgres" ? await walStats(pgServer) : null;
    await sleep(windowMs);
    const b = await snapshot(child);
    const walB = t.backend === "postgres" ? await walStats(pgServer) : null;
    const fsyncs = tracer ? countBetween(await tracer.stop(), a.at, b.at) : null;
    return figures(acquired, a, b, fsyncs, walA, walB, fsyncPerSec);
  } finally {
    child.send({ cmd: "exit" } satisfies HolderCommand);
    await new Promise((resolve) =>
      child.exitCode !== null ? resolve(null) : child.once("exit", resolve),
    );
  }
}

function figures(
  acq: Extract<HolderMessage, { type: "acquired" }>,
  a: Snapshot,
  b: Snapshot,
  fsyncs: number | null,
  walA: WalStats | null,
  walB: WalStats | null,
  fsyncPerSec: number,
): HolderFigures {
  const ticks = b.tally.calls - a.tally.calls;
  const renewMs = (b.tally.ms - a.tally.ms) / ticks;
  const wall = b.mono - a.mono;
  return {
    leases: acq.count,
    acquireMs: acq.ms,
    firstTenthMsEach: acq.firstTenthMsEach,
    lastTenthMsEach: acq.lastTenthMsEach,
    maxRenewGapWhileAcquiringMs: acq.maxRenewGapMs,
    windowMs: wall,
    ticks,
    itemsPerTick: (b.tally.items - a.tally.items) / ticks,
    renewMsPerTick: renewMs,
    maxRenewMs: b.tally.maxMs,
    fsyncsPerTick: fsyncs === null ? null : fsyncs / ticks,
    walSyncsPerTick: walA && walB ? (walB.walSync - walA.walSync) / ticks : null,
    walBytesPerTick: walA && walB ? (walB.walBytes - walA.walBytes) / ticks : null,
    fsyncEquivPerTick: renewMs / (1000 / fsyncPerSec),
    fsyncPerSec,
    cpuPct: (100 * (b.cpuUs - a.cpuUs)) / 1000 / wall,
    renewCpuSharePct: (100 * (b.tally.cpuUs - a.tally.cpuUs)) / (b.cpuUs - a.cpuUs),
    lost: acq.count - b.held,
    lostReasons: b.lostReasons,
  };
}

async function snapshot(child: ChildProcess): Promise<Snapshot> {
  const reply = nextMessage(child, "snapshot", 10_000);
  child.send({ cmd: "snapshot" } satisfies HolderCommand);
  return (await reply).snap;
}

function nextMessage<T extends HolderMessage["type"]>(
  child: ChildProcess,
  type: T,
  timeoutMs: number,
): Promise<Extract<HolderMessage, { type: T }>> {
  return nextChildMessage<HolderMessage, T>(child, "holder", type, timeoutMs);
}
