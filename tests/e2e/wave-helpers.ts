import assert from "node:assert/strict";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, waitFor, type CliResult } from "../support/cli.js";
import { tempDir } from "../support/paths.js";

/**
 * A fleet for wave tests: a hosts file, a patch script that appends `start H` and `patched H`
 * to a log (the log proves how often each host was patched), a check script that looks for
 * `patched H` there, and per-host gates: a host listed in `gated` blocks mid-patch until its
 * gate file exists, so a test can kill an agent with that host surely in flight.
 */
export interface Fleet {
  dir: string;
  hostsFile: string;
  log: string;
  patch: string;
  check: string;
  /** Lets a gated host's patch finish. */
  open: (host: string) => void;
  lines: () => string[];
  /** How many times the log says each host was started / patched. */
  count: (kind: "start" | "patched") => Map<string, number>;
  cleanup: () => void;
}

export function makeFleet(
  n: number,
  o: {
    gated?: readonly string[];
    failing?: readonly string[];
    groups?: number;
    /**
     * The patch ignores SIGTERM (a patch in a critical section that must not be cut short):
     * a deadline guard's TERM leaves it running until the KILL at the end of `--grace`.
     */
    ignoreTerm?: boolean;
  } = {},
): Fleet {
  const t = tempDir("quiesce-wave-");
  const dir = t.dir;
  const log = join(dir, "patch.log");
  const hostsFile = join(dir, "hosts");
  writeFileSync(
    hostsFile,
    Array.from({ length: n }, (_, i) =>
      o.groups ? `h${i + 1} group=g${i % o.groups}` : `h${i + 1}`,
    ).join("\n") + "\n",
  );
  const gated = (o.gated ?? []).join("|") || "none-gated";
  const failing = (o.failing ?? []).join("|") || "none-failing";
  const script = join(dir, "patch.sh");
  writeFileSync(
    script,
    `#!/bin/sh
${o.ignoreTerm ? "trap '' TERM" : ""}
echo "start $1" >> ${log}
case "$1" in ${gated}) while [ -d ${dir} ] && [ ! -e ${dir}/gate-$1 ]; do sleep 0.05; done;; esac
case "$1" in ${failing}) echo "E: could not patch $1"; exit 3;; esac
echo "patched $1" >> ${log}
`,
  );
  chmodSync(script, 0o755);
  const lines = () =>
    existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
  return {
    dir,
    hostsFile,
    log,
    patch: `${script} {host}`,
    // 0 patched, 1 not (also when nothing was ever logged: grep alone would exit 2, unknown).
    check: `[ -f ${log} ] && grep -qx "patched {host}" ${log}`,
    open: (host) => writeFileSync(join(dir, `gate-${host}`), ""),
    lines,
    count(kind) {
      const m = new Map<string, number>();
      for (const l of lines()) {
        const [k, h] = l.split(" ");
        if (k === kind) m.set(h!, (m.get(h!) ?? 0) + 1);
      }
      return m;
    },
    cleanup: () => {
      // Let any patch still blocked at its gate end before its directory goes (a gate loop
      // also ends once the directory is gone, so a failed test leaves no spinning patch).
      for (const h of o.gated ?? []) writeFileSync(join(dir, `gate-${h}`), "");
      t.cleanup();
    },
  };
}

export interface WaveStatusJson {
  wave: { state: string; reason: string | null };
  counts: Record<string, number>;
  budget: { maxFailures: number; failed: number; spent: boolean };
  holder: { state: string; token: number } | null;
  agent: { state: string } | null;
  review: { host: string; resolve: string }[];
  hosts: {
    host: string;
    state: string;
    reason: string | null;
    attempts: number;
    runId: string | null;
  }[];
}

export async function waveStatus(url: string, name: string): Promise<WaveStatusJson> {
  const r = await cli(["wave", "status", name, "--json", "--store", url]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as WaveStatusJson;
}

export function hostStates(s: WaveStatusJson): Record<string, string> {
  return Object.fromEntries(s.hosts.map((h) => [h.host, h.state]));
}

export async function createWave(
  url: string,
  name: string,
  fleet: Fleet,
  flags: readonly string[] = [],
): Promise<void> {
  const r = await cli([
    "wave",
    "create",
    name,
    "--hosts",
    fleet.hostsFile,
    ...flags,
    "--store",
    url,
  ]);
  assert.equal(r.code, 0, r.stderr);
}

/** `wave run` flags every test uses: short TTLs, the fleet's commands, logs in its dir. */
export function runArgs(url: string, name: string, fleet: Fleet, extra: readonly string[] = []) {
  return [
    "wave",
    "run",
    name,
    "--patch",
    fleet.patch,
    "--ttl",
    "1s",
    "--log-dir",
    join(fleet.dir, "logs"),
    "--store",
    url,
    ...extra,
  ];
}

export const waitForLine = (fleet: Fleet, line: string) =>
  waitFor(`"${line}" in the patch log`, () => fleet.lines().includes(line), 20_000);

export function explain(r: CliResult): string {
  return `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}
