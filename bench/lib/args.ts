/** Command line of `node dist/bench/lease-cycle.js [--seconds N] [--backend B] [--only S]`. */
import { benchFlags } from "./flags.js";

export type BackendName = "sqlite" | "postgres";
export type SectionName = "throughput" | "fairness" | "heartbeat";

export interface BenchArgs {
  /** The unit of time: each timed throughput variant gets this long; the other sections scale. */
  seconds: number;
  backends: BackendName[];
  sections: SectionName[];
  /** PostgreSQL server (loopback only); the bench works in its own schema there. */
  pgUrl: string;
}

const SECTIONS: readonly SectionName[] = ["throughput", "fairness", "heartbeat"];

export function parseArgs(argv: readonly string[]): BenchArgs {
  const out: BenchArgs = {
    seconds: 3,
    backends: ["sqlite", "postgres"],
    sections: [...SECTIONS],
    pgUrl: process.env.QUIESCE_BENCH_PG_URL || "postgres://postgres@127.0.0.1:5432/test",
  };
  const flag = benchFlags(USAGE, ["--seconds", "--backend", "--only"], argv);
  const seconds = flag("--seconds");
  if (seconds !== undefined) {
    if (!(Number(seconds) > 0)) usage(`--seconds: ${seconds} is not a positive number`);
    out.seconds = Number(seconds);
  }
  const backend = flag("--backend");
  if (backend === "sqlite" || backend === "postgres") out.backends = [backend];
  else if (backend !== undefined && backend !== "all")
    usage(`--backend: ${backend} is not sqlite, postgres or all`);
  const only = flag("--only");
  if (only !== undefined) {
    const wanted = only.split(",");
    const bad = wanted.filter((s) => !SECTIONS.includes(s as SectionName));
    if (bad.length > 0) usage(`--only: unknown section ${bad.join(", ")}`);
    out.sections = wanted as SectionName[];
  }
  const host = new URL(out.pgUrl).hostname;
  if (!["127.0.0.1", "localhost", "::1", "[::1]"].includes(host)) {
    usage(`the PostgreSQL URL must point at the loopback interface, not ${host}`);
  }
  return out;
}

const USAGE = `usage: node dist/bench/lease-cycle.js [--seconds N] [--backend sqlite|postgres|all] [--only ${SECTIONS.join(",")}]`;

function usage(why: string): never {
  process.stderr.write(`lease-cycle: ${why}\n${USAGE}\n`);
  process.exit(2);
}
