import { fmt, judge, note, table } from "../lib/report.js";
import type { HeartbeatResult, HolderFigures } from "./heartbeat.js";

const MAX_SYNCS_PER_TICK = 10;
const MAX_CPU_PCT = 5;

export function printHeartbeat(r: HeartbeatResult): void {
  const { small: s, large: l } = r;
  const name = r.backend === "sqlite" ? "SQLite" : "PostgreSQL";
  const both = (f: (x: HolderFigures) => string) => [f(s), f(l)];
  const syncs = (x: HolderFigures) =>
    r.backend === "sqlite" ? x.fsyncsPerTick : x.walSyncsPerTick;
  const syncLabel =
    r.backend === "sqlite"
      ? "fsyncs per tick (strace on the holder)"
      : "WAL syncs per tick (pg_stat_wal, server-wide)";
  const measured = syncs(s);
  table(
    `3. Heartbeat cost, ${name}: one holder process, Leases keepAlive, heartbeat 1 s, ttl 5 s`,
    ["", `${fmt(s.leases)} leases`, `${fmt(l.leases)} leases`, "baseline", "target", ""],
    [
      [
        "acquire all (Leases.acquire, in turn)",
        ...both(
          (x) => `${fmt(x.acquireMs / 1000, 1)} s = ${fmt((x.leases * 1000) / x.acquireMs)}/s`,
        ),
        "",
        "",
        "",
      ],
      [
        "  ms per acquisition, first / last 10%",
        ...both((x) => `${fmt(x.firstTenthMsEach, 2)} / ${fmt(x.lastTenthMsEach, 2)}`),
        "flat if O(1)",
        "",
        "",
      ],
      [
        "  longest gap between renewals while acquiring",
        ...both((x) => `${fmt(x.maxRenewGapWhileAcquiringMs)} ms`),
        "1,000 ms",
        "",
        "",
      ],
      [
        "ticks (renew calls) in window",
        ...both((x) => `${x.ticks} in ${fmt(x.windowMs / 1000, 1)} s`),
        "1 per s",
        "",
        "",
      ],
      ["leases renewed per tick", ...both((x) => fmt(x.itemsPerTick)), "", "", ""],
      [
        "renew time per tick, mean / max",
        ...both((x) => `${fmt(x.renewMsPerTick, 1)} / ${fmt(x.maxRenewMs, 1)} ms`),
        "",
        "",
        "",
      ],
      [
        syncLabel,
        ...both((x) => fmt(syncs(x), 2)),
        "1 commit; 1/lease: 1,000",
        `<= ${MAX_SYNCS_PER_TICK} (1k)`,
        measured === null
          ? "n/a"
          : judge(
              "heartbeat",
              r.backend,
              `syncs per tick, 1,000 leases <= ${MAX_SYNCS_PER_TICK}`,
              measured,
              measured <= MAX_SYNCS_PER_TICK,
            ),
      ],
      [
        "fsync-equivalents per tick (renew time / fsync time)",
        ...both((x) => fmt(x.fsyncEquivPerTick, 1)),
        `probe ${fmt(s.fsyncPerSec)} / ${fmt(l.fsyncPerSec)} fsync/s`,
        "",
        "",
      ],
      [
        "CPU of the holder, % of one core",
        ...both((x) => `${fmt(x.cpuPct, 2)} %`),
        "",
        `< ${MAX_CPU_PCT} % (10k)`,
        judge(
          "heartbeat",
          r.backend,
          `holder CPU, 10,000 leases < ${MAX_CPU_PCT}%`,
          l.cpuPct,
          l.cpuPct < MAX_CPU_PCT,
        ),
      ],
      ["  of which inside Store.renew", ...both((x) => `${fmt(x.renewCpuSharePct)} %`), "", "", ""],
      ["leases lost (by the end of the window)", ...both((x) => fmt(x.lost)), "0", "", ""],
    ],
  );
  for (const x of [s, l]) {
    for (const why of x.lostReasons) note(`${fmt(x.leases)} leases: lost ${why}`);
  }
  if (r.backend === "postgres") {
    note(`WAL bytes per tick: ${fmt(s.walBytesPerTick)} / ${fmt(l.walBytesPerTick)}`);
  }
}
