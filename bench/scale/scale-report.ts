/** The tables bench/scale prints. */
import { fmt, note, table } from "../lib/report.js";
import type { SizeFigures } from "./figures.js";
import type { WindowFigures } from "./server-watch.js";

export function printScale(
  rows: readonly SizeFigures[],
  baseline: WindowFigures,
  procs: number,
): void {
  table(
    `scale: measured, ${procs} keeper processes (each one Leases = one pool of at most 4 connections)`,
    [
      "profile",
      "leases",
      "window s",
      "stmts/s",
      "renewed/s",
      "conns mean/max",
      "backends seen",
      "WAL kB/s all/ours (fpi)",
      "B/renewal",
      "HOT %",
      "backends CPU %",
      "all postgres CPU %",
      "agents CPU %",
      "others busy",
      "lost",
    ],
    rows.map((r) => [
      r.profile,
      fmt(r.leases),
      fmt(r.windowS, 1),
      fmt(r.statementsPerS, 2),
      fmt(r.renewedPerS, 0),
      `${fmt(r.connectionsMean, 1)}/${fmt(r.connectionsMax)}`,
      fmt(r.backendsSeen),
      `${fmt(r.walBytesPerS / 1000, 1)}/${fmt(r.ourWalBytesPerS / 1000, 1)} (${fmt(r.fpiBytesPerS / 1000, 1)})`,
      fmt(r.walBytesPerRenewal, 0),
      fmt(r.hotPct, 0),
      fmt(r.backendCpuPct, 2),
      fmt(r.serverCpuPct, 2),
      fmt(r.agentCpuPct, 2),
      fmt(r.otherActiveMean, 2),
      fmt(r.lost),
    ]),
  );
  note(
    "CPU in % of one core. 'all' = the whole shared server (anyone's WAL and CPU); 'ours' = pg_walinspect's records of the bench schema and their commits; fpi = full-page images in ours.",
  );
  note(
    `idle baseline: WAL ${fmt(baseline.walBytes / (baseline.ms / 1000) / 1000, 1)} kB/s, all postgres ${fmt((100 * baseline.serverCpuMs) / baseline.ms, 2)}% CPU`,
  );
  table(
    "scale: per 1,000 held leases at heartbeat 10s (the fast profile's rates x 1/10)",
    [
      "profile",
      "leases",
      "renewed/s",
      "stmts/s per keeper",
      "WAL MB/day",
      "backends CPU %",
      "all postgres CPU %",
      "agents CPU %",
    ],
    rows.map((r) => [
      r.profile,
      fmt(r.leases),
      fmt(r.per1000.renewedPerS, 1),
      fmt(r.statementsPerProcPerS, 3),
      fmt(r.per1000.walMbPerDay, 0),
      fmt(r.per1000.backendCpuPct, 3),
      fmt(r.per1000.serverCpuPct, 3),
      fmt(r.per1000.agentCpuPct, 3),
    ]),
  );
  note(
    "WAL/day is ours; backends CPU = the postgres backends serving the keepers; all postgres CPU includes others' use of the shared server ('others busy' > 0: someone else was active).",
  );
}
