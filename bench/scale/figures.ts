/** Turns one measured window into the figures of bench/scale, per 1,000 held leases. */
import type { KeeperSnapshot } from "./keeper.js";
import type { WindowFigures } from "./server-watch.js";

/** The heartbeat the per-1,000 figures are stated at (quiesce's default: ttl 30s / 3). */
export const REFERENCE_HEARTBEAT_MS = 10_000;

export interface Profile {
  name: string;
  ttl: string;
  heartbeat: string;
  heartbeatMs: number;
  windowMs: number;
}

export interface SizeFigures {
  profile: string;
  leases: number;
  procs: number;
  acquireMs: number;
  windowS: number;
  lost: number;
  statementsPerS: number;
  renewedPerS: number;
  connectionsMean: number;
  connectionsMax: number;
  backendsSeen: number;
  walBytesPerS: number;
  /** The agents' WAL/s: pg_walinspect's records of the bench schema + their commits, or the
   * server's WAL/s minus the idle baseline's when pg_walinspect is missing. */
  ourWalBytesPerS: number;
  ourWalSource: "walinspect" | "lsn-minus-baseline";
  /** Of ourWalBytesPerS: full-page images. */
  fpiBytesPerS: number;
  /** Our WAL per lease renewed, bytes; % of the row updates that were HOT. */
  walBytesPerRenewal: number;
  hotPct: number;
  /** % of one core: the agents' backends, all postgres processes (anyone's), the agents. */
  backendCpuPct: number;
  serverCpuPct: number;
  agentCpuPct: number;
  otherActiveMean: number;
  /** Per 1,000 leases, at REFERENCE_HEARTBEAT_MS (a faster profile's rates scaled down). */
  scale: number;
  /** Renewal statements/s of one keeper process, at REFERENCE_HEARTBEAT_MS. */
  statementsPerProcPerS: number;
  per1000: {
    renewedPerS: number;
    walMbPerDay: number;
    backendCpuPct: number;
    serverCpuPct: number;
    agentCpuPct: number;
  };
}

export function sizeFigures(
  p: Profile,
  leases: number,
  acquireMs: number,
  a: readonly KeeperSnapshot[],
  b: readonly KeeperSnapshot[],
  w: WindowFigures,
  baseline: WindowFigures,
): SizeFigures {
  const sum = (f: (s: KeeperSnapshot) => number, xs: readonly KeeperSnapshot[]) =>
    xs.reduce((t, s) => t + f(s), 0);
  // The agents' own window runs from their first snapshot to their last.
  const agentS = (Math.max(...b.map((s) => s.mono)) - Math.min(...a.map((s) => s.mono))) / 1000;
  const s = w.ms / 1000;
  const statementsPerS = (sum((x) => x.tally.calls, b) - sum((x) => x.tally.calls, a)) / agentS;
  const renewedPerS = (sum((x) => x.tally.items, b) - sum((x) => x.tally.items, a)) / agentS;
  const walBytesPerS = w.walBytes / s;
  const ourWalBytesPerS = w.ours
    ? (w.ours.bytes + w.ours.commitBytes) / s
    : walBytesPerS - baseline.walBytes / (baseline.ms / 1000);
  const backendCpuPct = (100 * w.backendCpuMs) / w.ms;
  const serverCpuPct = (100 * w.serverCpuMs) / w.ms;
  const agentCpuPct =
    (100 * (sum((x) => x.cpuUs, b) - sum((x) => x.cpuUs, a))) / 1000 / (agentS * 1000);
  const scale = p.heartbeatMs / REFERENCE_HEARTBEAT_MS;
  const k = (scale * 1000) / leases;
  return {
    profile: p.name,
    leases,
    procs: a.length,
    acquireMs,
    windowS: s,
    lost: sum((x) => x.lost, b),
    statementsPerS,
    renewedPerS,
    connectionsMean: w.connectionsMean,
    connectionsMax: w.connectionsMax,
    backendsSeen: w.backendsSeen,
    walBytesPerS,
    ourWalBytesPerS,
    ourWalSource: w.ours ? "walinspect" : "lsn-minus-baseline",
    fpiBytesPerS: w.ours ? w.ours.fpiBytes / s : NaN,
    walBytesPerRenewal: ourWalBytesPerS / renewedPerS,
    hotPct: w.ours ? (100 * w.ours.hotUpdates) / w.ours.updates : NaN,
    backendCpuPct,
    serverCpuPct,
    agentCpuPct,
    otherActiveMean: w.otherActiveMean,
    scale,
    statementsPerProcPerS: (statementsPerS * scale) / a.length,
    per1000: {
      renewedPerS: renewedPerS * k,
      walMbPerDay: (ourWalBytesPerS * k * 86_400) / 1e6,
      backendCpuPct: backendCpuPct * k,
      serverCpuPct: serverCpuPct * k,
      agentCpuPct: agentCpuPct * k,
    },
  };
}
