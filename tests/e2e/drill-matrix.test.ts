import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import type { DrillReport } from "../../src/ops/drill/drill.js";
import { DRILL_POINTS } from "../../src/ops/drill/scenarios.js";
import { cli } from "../support/cli.js";
import { eachBackend, hasNoStack, withLocation } from "../support/e2e.js";
import { tempDir } from "../support/paths.js";

/** What each point must come to, per provider (issue #4, item 8). */
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

await eachBackend("quiesce drill: the six-point crash matrix", (b) => {
  test("every point, with a provider that has keys and lookups and with one that has neither: 12 PASS rows", () =>
    withLocation(b, "drill", async (url) => {
      const r = await cli([
        "drill",
        "--store",
        url,
        "--provider",
        "both",
        "--parallel",
        "4",
        "--json",
      ]);
      assert.equal(r.code, 0, `drill exit ${r.code}: ${r.stderr}\n${r.stdout.slice(0, 3000)}`);
      const report = JSON.parse(r.stdout) as DrillReport;
      assert.equal(report.backend, b.name);
      assert.equal(report.rows.length, 12);
      assert.deepEqual(
        report.rows.map((x) => `${x.point}/${x.provider}`).sort(),
        DRILL_POINTS.flatMap((p) => [`${p}/full`, `${p}/none`]).sort(),
      );
      for (const row of report.rows) {
        const what = `${row.point} (${row.provider})`;
        assert.ok(row.pass, `${what} failed: ${row.failures.join("; ")}`);
        assert.equal(row.observed, EXPECTED[row.point]![row.provider], what);
        assert.equal(row.expected, row.observed, what);
        for (const [key, n] of Object.entries(row.deliveries))
          assert.ok(n <= 1, `${what}: ${key} delivered ${n} times`);
        assert.ok(row.seq !== null && row.seqAtKill !== null && row.seq >= row.seqAtKill, what);
        assert.ok(row.runId.startsWith("drill-"), what);
        if (row.final.startsWith("completed")) assert.match(row.requestId ?? "", /^req-\d+$/, what);
      }
      const drain = report.rows.find((x) => x.point === "runtime.drain" && x.provider === "full")!;
      assert.match(drain.observedDetail, /job 3 refused while DRAINING/);
      assert.deepEqual(Object.values(drain.deliveries), [1, 1, 1]);
      const runs = await cli(["runs", "list", "--json", "--store", url]);
      assert.deepEqual(
        (JSON.parse(runs.stdout) as { runs: unknown[] }).runs,
        [],
        "the drill cleans up",
      );
    }));

  test("text output: one row per point with PASS, and the points listed", () =>
    withLocation(b, "drill-text", async (url) => {
      const r = await cli([
        "drill",
        "--store",
        url,
        "--point",
        "effect.after-ack",
        "journal.checkpoint-write",
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /^POINT +PROVIDER +EXPECTED +OBSERVED +RUN +SEQ +REQUEST +FINAL +RESULT$/m,
      );
      assert.match(
        r.stdout,
        /^effect\.after-ack +full +reconciled by key lookup: DISPATCHED -> OBSERVED .* PASS$/m,
      );
      assert.match(r.stdout, /^journal\.checkpoint-write +full .* PASS$/m);
      assert.match(r.stdout, /2\/2 PASS on /);
      assert.match(r.stderr, /drill: effect\.after-ack \(full\) PASS/);
      const list = await cli(["drill", "--list"]);
      for (const p of DRILL_POINTS)
        assert.match(list.stdout, new RegExp(`^${p.replace(".", "\\.")} `, "m"));
    }));
});

test("quiesce drill bad input: one sentence, exit 2", async () => {
  for (const [args, want] of [
    [["--provider", "some"], /--provider: "some" is not full, none or both/],
    [["--point", "effect.nope"], /--point: "effect.nope" is not a drill point/],
    [["--parallel", "0"], /--parallel: "0" is not a number from 1 to 12/],
    [["--ttl", "1"], /--ttl: "1" is not a duration/],
  ] as const) {
    const r = await cli(["drill", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, want);
    assert.ok(hasNoStack(r));
    assert.equal(r.stderr.trim().split("\n").length, 1);
  }
});

test("`quiesce drill` with no arguments runs on the default store (a non-root user's XDG state file)", async (t) => {
  if (process.getuid?.() === 0) {
    t.skip(
      "running as root: the default store is /var/lib/quiesce/quiesce.db, which tests do not touch",
    );
    return;
  }
  const tmp = tempDir();
  t.after(tmp.cleanup);
  const r = await cli(["drill"], { XDG_STATE_HOME: tmp.dir, QUIESCE_STORE: "" });
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    new RegExp(`6/6 PASS on sqlite ${join(tmp.dir, "quiesce", "quiesce.db")}`),
  );
});
