#!/usr/bin/env node
// Runs the compiled test suite: unit, then contract (every backend), then end-to-end (real
// processes, SIGKILL), then the fleet (hosts as network namespaces, real ssh, a private
// PostgreSQL; its files skip with the reason when not root or a tool is missing, and fail
// instead under CI=true). Extra arguments are passed to `node --test` (e.g. --test-name-pattern).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const only = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const flags = process.argv.slice(2).filter((a) => a.startsWith("--"));

function find(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return find(p);
    return name.endsWith(".test.js") ? [p] : [];
  });
}

const groups = only.length > 0 ? only : ["unit", "contract", "e2e", "fleet"];
// Loss events that a test's holder could not write (its store was made to fail) are spooled
// here, not in the machine's own outbox beside the default store, where every later quiesce
// process on the host would find them. Tests that look at the spool set their own.
const outbox = mkdtempSync(join(tmpdir(), "quiesce-test-outbox-"));
process.env.QUIESCE_OUTBOX_DIR ??= outbox;
process.on("exit", () => rmSync(outbox, { recursive: true, force: true }));
let failed = false;
for (const group of groups) {
  const files = find(join(root, "dist", "tests", group)).sort();
  if (files.length === 0) continue;
  console.log(`\n=== ${group}: ${files.length} file(s)`);
  // Two files at a time on every group: e2e files mostly wait (for expiries, for processes to
  // start), and every timing in them has a wide margin; see README "Tests".
  // The fleet's names and addresses are fixed: one fleet file at a time.
  const concurrency = group === "fleet" ? "1" : "2";
  // A test that hangs fails with its name instead of holding the suite until CI's limit. The
  // runner times each test file as one test too: the longest file, the three agent drills on
  // both stores (run one after another on purpose: two drills at once on 2 cores starve their
  // short leases), took more than 5 minutes on a slow machine; 10 minutes leaves room for load.
  const r = spawnSync(
    process.execPath,
    [
      "--test",
      `--test-concurrency=${concurrency}`,
      "--test-timeout=600000",
      "--test-reporter=spec",
      ...flags,
      ...files,
    ],
    // The group as a whole: the e2e group takes about 8 minutes idle. Past 40, something
    // (a test file's process that does not exit) is stuck: say so and go on.
    { stdio: "inherit", timeout: 40 * 60_000, killSignal: "SIGKILL" },
  );
  if (r.error?.code === "ETIMEDOUT" || r.signal === "SIGKILL") {
    console.error(`\n=== ${group}: still running after 40 minutes; stopped (a test file hung)`);
  }
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
