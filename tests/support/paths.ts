import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (tests run from dist/tests/...). */
export const REPO = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
export const CLI = join(REPO, "bin", "quiesce.js");

/** A fresh directory, removed by the returned cleanup (register it with t.after). */
export function tempDir(prefix = "quiesce-test-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
