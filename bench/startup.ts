/**
 * bench/startup: what a `quiesce` process costs from exec to exit, against a bare `node -e 0`
 * (our floor) measured in the same rounds: `quiesce --version`, and `quiesce run --lease S --
 * true` on SQLite (store open, migration check, acquire, the command's gate and deadline guard,
 * release). The runs are interleaved (one of each per round, rotating order) so that every
 * subject sees the same machine; the figure is the median of the rounds.
 *
 *   npm run build && node dist/bench/startup.js [--rounds 21]
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { benchDir } from "./lib/bench-env.js";
import { fmt, judge, note, table, verdicts } from "./lib/report.js";
import { REPO, writeResults } from "./lib/results.js";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const ROUNDS = Math.max(15, Number(arg("rounds", "21")));
const CLI = join(REPO, "bin", "quiesce.js");
const startedAt = new Date();
const { dir, cleanup } = benchDir();
const store = join(dir, "startup.db");

interface Subject {
  key: string;
  label: string;
  args: string[];
}
const subjects: Subject[] = [
  { key: "node", label: "node -e 0 (the floor)", args: ["-e", "0"] },
  { key: "version", label: "quiesce --version", args: [CLI, "--version"] },
  {
    key: "run",
    label: "quiesce run --lease S -- true (SQLite)",
    args: [CLI, "run", "--store", store, "--lease", "S", "--", "true"],
  },
];

function once(s: Subject): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, s.args, { stdio: ["ignore", "ignore", "pipe"] });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${s.label} exited ${r.status}: ${String(r.stderr)}`);
  return ms;
}

const times = new Map<string, number[]>(subjects.map((s) => [s.key, []]));
try {
  for (const s of subjects) once(s); // warm the page cache; creates the store
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < subjects.length; i++) {
      const s = subjects[(i + round) % subjects.length]!;
      times.get(s.key)!.push(once(s));
    }
  }
} finally {
  cleanup();
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const med = Object.fromEntries(subjects.map((s) => [s.key, median(times.get(s.key)!)]));
const floor = med.node!;
const limits: Record<string, number> = { version: 1.2, run: 1.5 };
table(
  `Start-up: exec to exit, median of ${ROUNDS} interleaved rounds`,
  ["", "median", "vs node -e 0", "target", ""],
  subjects.map((s) => {
    const ratio = med[s.key]! / floor;
    const limit = limits[s.key];
    return [
      s.label,
      `${fmt(med[s.key], 1)} ms`,
      `${fmt(ratio, 2)}x`,
      limit ? `<= ${fmt(limit, 1)}x` : "",
      limit
        ? judge("startup", "sqlite", `${s.key} <= ${limit}x node -e 0`, ratio, ratio <= limit)
        : "",
    ];
  }),
);
note(
  `min / max per subject: ${subjects.map((s) => `${s.key} ${fmt(Math.min(...times.get(s.key)!), 1)}/${fmt(Math.max(...times.get(s.key)!), 1)} ms`).join(", ")}`,
);
const misses = verdicts.filter((v) => !v.pass);
console.log(`\nTargets: ${verdicts.length - misses.length} PASS, ${misses.length} MISS`);
const file = writeResults("startup", startedAt, {
  rounds: ROUNDS,
  medianMs: med,
  samplesMs: Object.fromEntries(times),
});
console.log(`\nJSON: ${file}`);
