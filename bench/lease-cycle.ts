/**
 * bench/lease-cycle: what a lease costs. Three sections per backend, each figure printed
 * beside a baseline measured in the same run (the disk's fsync rate swings 2-3x in minutes):
 *
 *  1. throughput: uncontended acquire+release cycles/s, ours vs the same SQL raw,
 *     proper-lockfile and an fsync probe;
 *  2. fairness: 4 processes queueing for one scope with `--wait` semantics;
 *  3. heartbeat: the keeper's cost for 1,000 and 10,000 held leases.
 *
 *   npm run build && node dist/bench/lease-cycle.js [--seconds N] [--backend sqlite|postgres|all]
 */
import { parseArgs, type BackendName } from "./lib/args.js";
import { benchDir, dropPgSchema, pgUnreachable } from "./lib/bench-env.js";
import { note, verdicts } from "./lib/report.js";
import { writeResults } from "./lib/results.js";
import {
  measureFairness,
  measureLockReference,
  printFairness,
  type LockReference,
} from "./lease-cycle/fairness.js";
import { measureAdvisoryHandoff, type HandoffReference } from "./lease-cycle/advisory-handoff.js";
import { printHeartbeat } from "./lease-cycle/heartbeat-report.js";
import { measureHeartbeat } from "./lease-cycle/heartbeat.js";
import { targetFor } from "./lease-cycle/subjects.js";
import { printThroughput } from "./lease-cycle/throughput-report.js";
import { measureThroughput } from "./lease-cycle/throughput.js";

const args = parseArgs(process.argv.slice(2));
const startedAt = new Date();
const { dir, cleanup } = benchDir();
const results: Partial<Record<BackendName, Record<string, unknown>>> = {};
const skipped: Record<string, string> = {};
let reference: HandoffReference | null = null;
let lockReference: LockReference | null | undefined;

async function runBackend(b: BackendName): Promise<void> {
  const out: Record<string, unknown> = {};
  results[b] = out;
  const s = args.seconds;
  if (args.sections.includes("throughput")) {
    const r = await measureThroughput(targetFor(b, dir, args.pgUrl), dir, args.pgUrl, s);
    printThroughput(r);
    out.throughput = r;
  }
  if (args.sections.includes("fairness")) {
    reference ??= await measureAdvisoryHandoff(args.pgUrl);
    // Beside PostgreSQL's figures only: the reference is its server's lock manager, which a
    // SQLite store has no counterpart of.
    if (b === "postgres") lockReference ??= await measureLockReference(args.pgUrl, s * 2);
    const r = await measureFairness(
      targetFor(b, dir, args.pgUrl, "fairness.db"),
      s * 2,
      reference,
      b === "postgres" ? (lockReference ?? null) : null,
      dir,
    );
    printFairness(r);
    out.fairness = r;
  }
  if (args.sections.includes("heartbeat")) {
    const r = await measureHeartbeat(
      targetFor(b, dir, args.pgUrl, "heartbeat.db"),
      args.pgUrl,
      dir,
      s,
    );
    printHeartbeat(r);
    out.heartbeat = r;
  }
}

console.log(
  `lease-cycle: backends ${args.backends.join(", ")}; sections ${args.sections.join(", ")}; --seconds ${args.seconds}; files in ${dir}`,
);
let pgUsed = false;
try {
  for (const b of args.backends) {
    if (b === "postgres") {
      const why = await pgUnreachable(args.pgUrl);
      if (why !== null) {
        skipped.postgres = `PostgreSQL at ${args.pgUrl} is not reachable: ${why}`;
        console.log(`\nskipping PostgreSQL: ${skipped.postgres}`);
        continue;
      }
      pgUsed = true;
    }
    await runBackend(b);
  }
} finally {
  cleanup();
  if (pgUsed) await dropPgSchema(args.pgUrl);
}

const misses = verdicts.filter((v) => !v.pass);
console.log(`\nTargets: ${verdicts.length - misses.length} PASS, ${misses.length} MISS`);
for (const m of misses)
  note(`MISS ${m.backend} ${m.section}: ${m.target} (measured ${m.value.toFixed(2)})`);
const file = writeResults("lease-cycle", startedAt, { args, skipped, results });
console.log(`\nJSON: ${file}`);
