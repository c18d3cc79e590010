import { fmt, judge, note, table } from "../lib/report.js";
import { TARGET_RATIO, type ThroughputResult } from "./throughput.js";

export function printThroughput(r: ThroughputResult): void {
  const title =
    r.backend === "sqlite"
      ? "1. Uncontended acquire+release, SQLite (WAL, synchronous=FULL, BEGIN IMMEDIATE)"
      : "1. Uncontended acquire+release, PostgreSQL (one statement = one commit each)";
  const syncCol = r.backend === "sqlite" ? "fsyncs/cycle" : "WAL syncs/cycle";
  const rows: string[][] = [
    [
      "fsync probe: 4 KiB overwrite + fdatasync",
      `${fmt(r.fsyncPerSec)} fsync/s`,
      fmt(1e6 / r.fsyncPerSec),
      "",
      "1",
      "",
      "",
      "",
    ],
    ["ceiling: two commits per cycle", fmt(r.fsyncPerSec / 2), "", "0.50", "2", "", "", ""],
  ];
  // The reference is the fastest raw SQL of the same statements: on PostgreSQL that is named
  // prepared statements (issue 12's table), on SQLite better-sqlite3 prepares anyway.
  const ref =
    r.variants.find((v) => v.key === "rawPrepared") ?? r.variants.find((v) => v.key === "raw")!;
  const refName = ref.key === "rawPrepared" ? "raw prepared" : "raw";
  for (const v of r.variants) {
    const ours = v.key === "store" || v.key === "leases";
    const vsRef = v.perSec / ref.perSec;
    rows.push([
      v.label,
      fmt(v.perSec),
      fmt(v.usPerCycle),
      fmt(v.perFsync, 2),
      fmt(v.syncsPerCycle, 2),
      fmt(v.vsRaw, 2),
      fmt(vsRef, 2),
      ours ? `>= ${TARGET_RATIO}x ${refName}` : "",
      ours
        ? judge(
            "throughput",
            r.backend,
            `${v.label} >= ${TARGET_RATIO}x ${refName}`,
            vsRef,
            // Against a stale copy of the SQL the ratio means nothing: not a PASS.
            vsRef >= TARGET_RATIO && r.sqlDrift.length === 0,
          )
        : "",
    ]);
  }
  table(
    title,
    ["", "cycles/s", "us/cycle", "cycles/fsync", syncCol, "vs raw", `vs ${refName}`, "target", ""],
    rows,
  );
  note(`disk by thirds of the run: ${r.fsyncPerSecByThird.map((x) => fmt(x)).join(" / ")} fsync/s`);
  const raw = r.variants.find((v) => v.key === "raw")!;
  for (const v of r.variants.filter((x) => x.key === "store" || x.key === "leases")) {
    note(
      `${v.label}: ${fmt(v.usPerCycle - raw.usPerCycle)} us/cycle more than raw; vs raw by thirds ${v.vsRawByThird.map((x) => fmt(x, 2)).join(" / ")}`,
    );
  }
  const js = r.jsOverhead;
  if (js) {
    note(
      `same cycles on :memory: (CPU only): raw ${fmt(js.rawUs)} us, store ${fmt(js.storeUs)} us (+${fmt(js.storeUs - js.rawUs)}), leases ${fmt(js.leasesUs)} us (+${fmt(js.leasesUs - js.rawUs)})`,
    );
  }
  if (r.backend === "postgres") {
    const wal = r.variants.filter((v) => v.walBytesPerCycle !== null);
    note(
      `WAL bytes/cycle: ${wal.map((v) => `${v.key} ${fmt(v.walBytesPerCycle)}`).join(", ")} (pg_stat_wal, server-wide)`,
    );
  }
  if (r.sqlDrift.length > 0) {
    note(
      `MISS: the raw copies of ${r.sqlDrift.join(", ")} differ from the library's SQL, so "vs raw" compares other statements; update bench/lease-cycle/raw-*.ts`,
    );
  }
}
