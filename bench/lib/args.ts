/** Command line of `node dist/bench/lease-cycle.js [--seconds N] [--backend B] [--only S]`. */
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
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === "--seconds" && value !== undefined && Number(value) > 0) {
      out.seconds = Number(value);
    } else if (flag === "--backend" && (value === "sqlite" || value === "postgres")) {
      out.backends = [value];
    } else if (flag === "--backend" && value === "all") {
      out.backends = ["sqlite", "postgres"];
    } else if (flag === "--only" && value !== undefined) {
      const wanted = value.split(",");
      const bad = wanted.filter((s) => !SECTIONS.includes(s as SectionName));
      if (bad.length > 0) usage(`--only: unknown section ${bad.join(", ")}`);
      out.sections = wanted as SectionName[];
    } else {
      usage(`unexpected argument ${flag ?? ""}`);
    }
    i++;
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
