import assert from "node:assert/strict";
import { test } from "node:test";
import type { DrillReport } from "../../src/ops/drill/drill.js";
import { DRILL_POINTS } from "../../src/ops/drill/scenarios.js";
import { cli } from "../support/cli.js";
import { eachBackend, hasNoStack, withLocation } from "../support/e2e.js";

/**
 * The six-point matrix against real framework agents (issue #11): an AI SDK generateText loop,
 * an MCP server over stdio, Debian's chromium submitting a checkout form. Each effect lands at
 * most once (the provider counts) and each run is classified as with the demo agent.
 */
const EXPECTED: Record<string, { full: string; none: string }> = {
  "runtime.drain": {
    full: "reconciled by key lookup: DISPATCHED -> OBSERVED",
    none: "quarantined: DISPATCHED -> NEEDS_REVIEW",
  },
  "effect.before-dispatch": {
    full: "replayed: PLANNED -> OBSERVED",
    none: "replayed: PLANNED -> OBSERVED",
  },
  "effect.after-dispatch": {
    full: "reconciled by key lookup: DISPATCHED -> OBSERVED",
    none: "quarantined: DISPATCHED -> NEEDS_REVIEW",
  },
  "effect.after-ack": {
    full: "reconciled by key lookup: DISPATCHED -> OBSERVED",
    none: "quarantined: DISPATCHED -> NEEDS_REVIEW",
  },
  "journal.checkpoint-write": {
    full: "reconciled by lookup: ACKNOWLEDGED -> OBSERVED",
    none: "completed from the intact record: ACKNOWLEDGED -> OBSERVED",
  },
  "runtime.after-quiesced": {
    full: "clean restart: nothing to recover, nothing replayed",
    none: "clean restart: nothing to recover, nothing replayed",
  },
};

for (const agent of ["ai-sdk", "mcp", "browser"] as const)
  await eachBackend(`quiesce drill --agent ${agent}: the six-point matrix`, (b) => {
    test(`12 PASS rows with --provider both, every effect at most once`, () =>
      withLocation(b, `drill-${agent}`, async (url) => {
        const r = await cli([
          "drill",
          "--agent",
          agent,
          "--store",
          url,
          "--provider",
          "both",
          "--parallel",
          "3",
          "--json",
        ]);
        assert.equal(r.code, 0, `drill exit ${r.code}: ${r.stderr}\n${r.stdout.slice(0, 4000)}`);
        const report = JSON.parse(r.stdout) as DrillReport;
        assert.equal(report.agent, agent);
        assert.equal(report.backend, b.name);
        assert.deepEqual(
          report.rows.map((x) => `${x.point}/${x.provider}`).sort(),
          DRILL_POINTS.flatMap((p) => [`${p}/full`, `${p}/none`]).sort(),
        );
        for (const row of report.rows) {
          const what = `${agent} ${row.point} (${row.provider})`;
          assert.ok(row.pass, `${what} failed: ${row.failures.join("; ")}`);
          assert.equal(row.agent, agent, what);
          assert.equal(row.observed, EXPECTED[row.point]![row.provider], what);
          for (const [key, n] of Object.entries(row.deliveries))
            assert.ok(n <= 1, `${what}: ${key} delivered ${n} times`);
          if (row.final.startsWith("completed"))
            assert.match(row.requestId ?? "", /^req-\d+$/, what);
        }
        const runs = await cli(["runs", "list", "--json", "--store", url]);
        assert.equal(runs.code, 0, `runs list after the drill: exit ${runs.code}: ${runs.stderr}`);
        assert.deepEqual((JSON.parse(runs.stdout) as { runs: unknown[] }).runs, [], "cleaned up");
      }));
  });

test("drill --agent: an unknown agent, and the browser agent without chromium: one sentence, exit 2", async () => {
  const bad = await cli(["drill", "--agent", "selenium"]);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(
    bad.stderr,
    /--agent: "selenium" is not a drill agent \(demo, ai-sdk, mcp, browser\)/,
  );
  const none = await cli(["drill", "--agent", "browser"], {
    QUIESCE_CHROMIUM: "/nonexistent/chromium",
  });
  assert.equal(none.code, 2, none.stderr);
  assert.match(
    none.stderr,
    /the browser drill needs chromium and found none \(looked at \/nonexistent\/chromium\): install it with `sudo apt-get install chromium`/,
  );
  assert.match(none.stderr, /never downloads a browser/);
  assert.ok(hasNoStack(none));
  assert.equal(none.stderr.trim().split("\n").length, 1);
  assert.equal(none.stdout, "", "no row ran");
});
