import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, release } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { verdicts } from "./report.js";

/** The repository root (this file runs as dist/bench/lib/results.js). */
export const REPO = resolve(fileURLToPath(new URL("../../..", import.meta.url)));

function git(args: string[]): string | null {
  try {
    return execFileSync("git", args, { cwd: REPO, encoding: "utf8" }).trim();
  } catch {
    return null;
  }
}

/** Writes bench/results/<name>-<timestamp>.json and returns its path. */
export function writeResults(
  name: string,
  startedAt: Date,
  payload: Record<string, unknown>,
): string {
  const dir = join(REPO, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, "-");
  const file = join(dir, `${name}-${stamp}.json`);
  const body = {
    bench: name,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    argv: process.argv.slice(2),
    environment: {
      node: process.version,
      kernel: release(),
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? null,
      commit: git(["rev-parse", "HEAD"]),
      uncommittedChanges: (git(["status", "--porcelain"]) ?? "").split("\n").filter(Boolean).length,
    },
    ...payload,
    verdicts,
  };
  writeFileSync(file, `${JSON.stringify(body, null, 2)}\n`);
  return file;
}
