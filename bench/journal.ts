/**
 * bench/journal: effects per second through PLANNED -> DISPATCHED -> ACKNOWLEDGED -> OBSERVED,
 * on each backend, sequentially and with 16 concurrent runs, printed beside an fsync probe of
 * the disk and the same writes as raw SQL measured in the same run.
 *
 * Four durable commits per effect put the ceiling at 0.25 effects per fsync. Targets (issue #4):
 * sequential >= 0.2 effects per fsync on SQLite (synchronous=FULL, syncs counted with strace);
 * 16 concurrent runs share commits and reach >= 3x the sequential rate.
 *
 *   npm run bench:journal -- [--seconds N] [--backend sqlite|postgres|all]
 */
import { join } from "node:path";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { openStore } from "../src/store/open-store.js";
import { benchDir, dropPgSchema, pgStoreUrl, pgUnreachable } from "./lib/bench-env.js";
import { fmt, judge, note, table, verdicts } from "./lib/report.js";
import { writeResults } from "./lib/results.js";
import {
  CONCURRENT_RUNS,
  measureBackend,
  type BackendResult,
  type Figure,
} from "./journal/measure.js";
import { benchFlags } from "./lib/flags.js";

const flag = benchFlags(
  "usage: node dist/bench/journal.js [--seconds N] [--backend sqlite|postgres|all]",
  ["--seconds", "--backend"],
);
const seconds = Number(flag("--seconds") ?? 3);
const which = flag("--backend") ?? "all";
if (!(seconds > 0) || !["sqlite", "postgres", "all"].includes(which)) {
  process.stderr.write(
    "usage: node dist/bench/journal.js [--seconds N] [--backend sqlite|postgres|all]\n",
  );
  process.exit(2);
}
const pgServer = process.env.QUIESCE_BENCH_PG_URL || "postgres://postgres@127.0.0.1:5432/test";
const startedAt = new Date();
const { dir, cleanup } = benchDir();
const results: BackendResult[] = [];
const skipped: Record<string, string> = {};

function row(f: Figure, vs: Figure | null): string[] {
  return [
    f.label,
    fmt(f.effectsPerSec),
    fmt(1e6 / f.effectsPerSec),
    fmt(f.perFsync, 3),
    fmt(f.commitsPerEffect, 2),
    fmt(f.syncsPerEffect, 2),
    vs ? `${fmt(f.effectsPerSec / vs.effectsPerSec, 2)}x` : "",
  ];
}

function print(r: BackendResult): void {
  const s = r.sequential;
  const c = r.concurrent;
  table(
    `journal [${r.backend}]: one effect = PLANNED -> DISPATCHED -> ACKNOWLEDGED -> OBSERVED (fsync probe: ${fmt(r.fsyncPerSec)}/s)`,
    [
      "variant",
      "effects/s",
      "us/effect",
      "effects/fsync",
      "commits/effect",
      "syncs/effect",
      "vs raw",
    ],
    [
      row(s.raw, null),
      row(s.ours, s.raw),
      ...(c.raw ? [row(c.raw, null)] : []),
      row(c.ours, c.raw ?? s.raw),
    ],
  );
  if (c.rawNote) note(c.rawNote);
  if (r.backend === "sqlite") {
    // Issue 12's row: sequential effects against the same writes as raw SQL, in the same run.
    const vsRaw = s.ours.effectsPerSec / s.raw.effectsPerSec;
    const v = judge("journal", r.backend, "sequential >= 0.95x raw", vsRaw, vsRaw >= 0.95);
    note(
      `${v}: sequential ${fmt(vsRaw, 2)}x the raw writes (target >= 0.95x; ${fmt(s.ours.perFsync, 3)} effects per fsync, ceiling 0.25 at 4 commits per effect)`,
    );
  }
  const g = judge(
    "journal",
    r.backend,
    `${CONCURRENT_RUNS} concurrent runs >= 3x sequential`,
    r.groupCommitGain,
    r.groupCommitGain >= 3,
  );
  note(
    `${g}: ${CONCURRENT_RUNS} concurrent runs ${fmt(r.groupCommitGain, 1)}x the sequential rate (target >= 3x)`,
  );
}

console.log(`journal: backends ${which}; --seconds ${seconds}; files in ${dir}`);
let pgUsed = false;
try {
  for (const b of which === "all"
    ? (["sqlite", "postgres"] as const)
    : ([which] as ["sqlite" | "postgres"])) {
    let url: string;
    let rawUrl: string;
    if (b === "postgres") {
      const why = await pgUnreachable(pgServer);
      if (why !== null) {
        skipped.postgres = `PostgreSQL at ${pgServer} is not reachable: ${why}`;
        console.log(`\nskipping PostgreSQL: ${skipped.postgres}`);
        continue;
      }
      pgUsed = true;
      await dropPgSchema(pgServer);
      url = rawUrl = pgStoreUrl(pgServer);
      await (await openStore(url)).close();
    } else {
      url = join(dir, "journal.db");
      rawUrl = join(dir, "raw.db");
      await new SqliteStore(rawUrl).close(); // its own file and WAL, with the schema
    }
    const r = await measureBackend(b, url, rawUrl, pgServer, dir, seconds);
    print(r);
    results.push(r);
  }
} finally {
  cleanup();
  if (pgUsed) await dropPgSchema(pgServer);
}
const misses = verdicts.filter((v) => !v.pass);
console.log(`\nTargets: ${verdicts.length - misses.length} PASS, ${misses.length} MISS`);
const file = writeResults("journal", startedAt, { seconds, backends: which, skipped, results });
console.log(`JSON: ${file}`);
