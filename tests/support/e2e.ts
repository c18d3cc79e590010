import { readdirSync, readFileSync } from "node:fs";
import { describe } from "node:test";
import { BACKENDS, type Backend } from "./backends.js";
import { cli, killStartedSince, startedSoFar, type CliResult } from "./cli.js";

/**
 * Declares the same end-to-end suite once per backend. Each backend's block is skipped with
 * the reason when it cannot run here (and fails instead under CI, see support/pg.ts).
 */
export async function eachBackend(title: string, body: (backend: Backend) => void): Promise<void> {
  for (const b of BACKENDS) {
    const skip = await b.skip();
    describe(`${title} [${b.name}]`, { skip }, () => body(b));
  }
}

/** A fresh store location for one test, cleaned up afterwards. */
export async function withLocation(
  b: Backend,
  tag: string,
  fn: (url: string) => Promise<void>,
): Promise<void> {
  const loc = b.prepare(tag);
  const mark = startedSoFar();
  try {
    await fn(loc.url);
  } catch (e) {
    // A failed test's processes go first: a stopped one inside a PostgreSQL transaction would
    // hold locks that the schema's DROP waits for, for ever.
    killStartedSince(mark);
    throw e;
  } finally {
    await loc.cleanup();
  }
}

export interface LeaseJson {
  held?: boolean;
  scope: string;
  token: number;
  expired: boolean;
  expiresAt: string;
  heartbeatAt: string;
  owner: {
    runId: string;
    pid: number | null;
    childPid: number | null;
    system: string;
    host: string;
  };
}

export async function showLease(url: string, scope: string): Promise<LeaseJson | null> {
  const r = await cli(["lock", "show", scope, "--json", "--store", url]);
  if (r.code !== 0) throw new Error(`lock show failed (${r.code}): ${r.stderr}`);
  const j = JSON.parse(r.stdout) as LeaseJson;
  return j.held === false ? null : j;
}

export interface EventJson {
  id: number;
  kind: string;
  runId: string | null;
  scope: string | null;
  token: number | null;
  message: string;
  detail: Record<string, unknown>;
}

export async function events(url: string, scope?: string): Promise<EventJson[]> {
  const r = await cli([
    "events",
    "--json",
    "--limit",
    "10000",
    "--store",
    url,
    ...(scope ? ["--scope", scope] : []),
  ]);
  if (r.code !== 0) throw new Error(`events failed (${r.code}): ${r.stderr}`);
  return r.stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as EventJson);
}

/** stderr of a CLI run must be plain sentences: no stack trace unless QUIESCE_DEBUG=1. */
export function hasNoStack(r: CliResult): boolean {
  return !/\n\s+at .+\(.+:\d+:\d+\)/.test(r.stderr) && !/node:internal/.test(r.stderr);
}

/** Live pids whose environment carries QUIESCE_RUN_ID=<runId> (Linux /proc). */
export function processesOfRun(runId: string): number[] {
  const needle = `QUIESCE_RUN_ID=${runId}\0`;
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, "latin1");
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if ((env.startsWith(needle) || env.includes(`\0${needle}`)) && state !== "Z")
        out.push(Number(name));
    } catch {
      /* gone, or not ours */
    }
  }
  return out;
}
