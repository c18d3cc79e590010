/**
 * `npm run bench`: every benchmark in turn, each in its own process (so one's memory and
 * connections never weigh on the next), then one table of every target they judged, read back
 * from the result files this run wrote: the figure, the target and PASS/MISS.
 *
 *   npm run bench [-- --only lease-cycle,startup]
 */
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { benchFlags } from "./lib/flags.js";
import { fmt, table } from "./lib/report.js";
import { REPO } from "./lib/results.js";

/** In the order they run; the name is the result file's prefix and the script's name. */
const BENCHES = ["lease-cycle", "takeover", "journal", "wave", "lifecycle", "startup"] as const;

interface ResultFile {
  bench: string;
  startedAt: string;
  verdicts: { section: string; backend: string; target: string; value: number; pass: boolean }[];
}

const flag = benchFlags(`usage: npm run bench [-- --only ${BENCHES.join(",")}]`, ["--only"]);
const only = flag("--only")?.split(",") ?? null;
const unknown = only?.filter((n) => !(BENCHES as readonly string[]).includes(n)) ?? [];
if (unknown.length > 0) {
  process.stderr.write(`bench: no benchmark named ${unknown.join(", ")} (${BENCHES.join(", ")})\n`);
  process.exit(2);
}
const chosen = BENCHES.filter((b) => !only || only.includes(b));
const runStart = new Date();
const failed: string[] = [];
for (const name of chosen) {
  console.log(`\n======== bench/${name}`);
  const script = fileURLToPath(new URL(`./${name}.js`, import.meta.url));
  const r = spawnSync(process.execPath, [script], { stdio: "inherit" });
  if (r.status !== 0) failed.push(`${name} (exit ${r.status ?? r.signal})`);
}

const dir = join(REPO, "bench", "results");
const files: ResultFile[] = readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as ResultFile)
  .filter((r) => new Date(r.startedAt) >= runStart && chosen.includes(r.bench as never));
const rows = files
  .sort((a, b) => chosen.indexOf(a.bench as never) - chosen.indexOf(b.bench as never))
  .flatMap((f) =>
    (f.verdicts ?? []).map((v) => [
      f.bench,
      v.section,
      v.backend,
      v.target,
      fmt(v.value, 2),
      v.pass ? "PASS" : "MISS",
    ]),
  );
table(
  `Every target judged in this run (${chosen.length} benchmarks, started ${runStart.toISOString()})`,
  ["bench", "section", "store", "target", "measured", ""],
  rows,
);
const misses = rows.filter((r) => r[5] === "MISS").length;
console.log(`\n${rows.length - misses} PASS, ${misses} MISS`);
for (const f of failed) console.log(`benchmark failed: ${f}`);
const missing = chosen.filter((b) => !files.some((f) => f.bench === b));
for (const m of missing) console.log(`no result file from ${m}`);
process.exit(failed.length > 0 ? 1 : 0);
