import assert from "node:assert/strict";
import { test } from "node:test";
import { jobKey, jobRunId } from "../../src/ops/drill/jobs.js";
import { cli, waitFor } from "../support/cli.js";
import { eachBackend, events, hasNoStack, withLocation } from "../support/e2e.js";
import { startAgent, waitRunState, waitRuntimeState, withRig } from "./journal-helpers.js";

interface Status {
  runtimeId: string;
  state: string;
  maintenanceId: string | null;
  acceptingWork: boolean;
  activeRuns: number;
  runsNeedingReview: number;
  note: string | null;
  lease: { state: string };
  pendingRequest: unknown;
}

/** The maintenance-window protocol driven from another process, against a real agent process. */
await eachBackend("maintenance windows: a real agent drained from the command line", (b) => {
  test("`maintenance start --wait` drains a running agent to STOPPED within the second; status shows each step", () =>
    withLocation(b, "mw-start", async (url) =>
      withRig(url, "full", async ({ provider, store, agents }) => {
        const agent = startAgent(url, "agent-1", provider);
        agents.push(agent);
        await agent.line("started", 20_000);
        provider.addJob("1");
        await waitRunState(store, jobRunId("agent-1", "1"), "completed");
        const st = await cli(["maintenance", "status", "agent-1", "--json", "--store", url]);
        assert.equal(st.code, 0, st.stderr);
        const before = JSON.parse(st.stdout) as Status;
        assert.deepEqual(
          [before.state, before.acceptingWork, before.lease.state],
          ["RUNNING", true, "live"],
        );
        const list = await cli(["maintenance", "status", "--store", url]);
        assert.match(list.stdout, /^agent-1 +RUNNING +- +yes +0 +0 /m);

        const r = await cli([
          "maintenance",
          "start",
          "agent-1",
          "--id",
          "mw-1",
          "--drain-timeout",
          "30s",
          "--wait",
          "--store",
          url,
        ]);
        assert.equal(r.code, 0, r.stderr);
        assert.match(
          r.stdout,
          /requested: maintenance mw-1 for runtime agent-1 \(drain timeout 30s\)/,
        );
        assert.match(r.stdout, /runtime agent-1 is STOPPED/);
        const exit = await agent.exit(20_000);
        assert.equal(exit.code, 0, agent.stderr);
        const after = JSON.parse(
          (await cli(["maintenance", "status", "agent-1", "--json", "--store", url])).stdout,
        ) as Status;
        assert.deepEqual(
          [after.state, after.maintenanceId, after.lease.state, after.pendingRequest],
          ["STOPPED", "mw-1", "free", null],
        );
        const ev = await events(url, "runtime:agent-1");
        assert.deepEqual(
          ev
            .filter((e) => e.kind === "runtime.transition")
            .map((e) => `${String(e.detail.from)}>${String(e.detail.to)}`),
          ["null>RUNNING", "RUNNING>DRAINING", "DRAINING>QUIESCED", "QUIESCED>STOPPED"],
        );
        assert.ok(ev.some((e) => e.kind === "maintenance.requested"));
        const again = await cli([
          "maintenance",
          "start",
          "agent-1",
          "--id",
          "mw-2",
          "--store",
          url,
        ]);
        assert.equal(again.code, 0);
        assert.match(again.stdout, /runtime agent-1 is STOPPED: nothing to drain/);
      }),
    ));

  test("SIGTERM to the agent runs the same protocol; a restart after STOPPED recovers nothing", () =>
    withLocation(b, "mw-sigterm", async (url) =>
      withRig(url, "full", async ({ provider, store, agents }) => {
        const a = startAgent(url, "agent-2", provider);
        agents.push(a);
        await a.line("started", 20_000);
        provider.addJob("1");
        await waitRunState(store, jobRunId("agent-2", "1"), "completed");
        process.kill(a.pid, "SIGTERM");
        assert.equal((await a.exit(20_000)).code, 0);
        const rec = (await store.journal.getRuntime("agent-2")).runtime!;
        assert.equal(rec.state, "STOPPED");
        assert.match(rec.maintenanceId ?? "", /^sigterm-\d+$/);
        const b2 = startAgent(url, "agent-2", provider);
        agents.push(b2);
        const started = (await b2.line("started", 20_000))!;
        const report = started.report as { found: string; recovered: unknown[] };
        assert.match(report.found, /previous process stopped cleanly/);
        assert.deepEqual(report.recovered, []);
        assert.equal(provider.executed(jobKey("1")), 1);
        process.kill(b2.pid, "SIGTERM");
        assert.equal((await b2.exit(20_000)).code, 0);
      }),
    ));

  test("a drain deadline with a side effect dispatched but unacknowledged ends in NEEDS_REVIEW (exit 1 for --wait)", () =>
    withLocation(b, "mw-deadline", async (url) =>
      withRig(url, "none", async ({ provider, store, agents }) => {
        const a = startAgent(url, "agent-3", provider);
        agents.push(a);
        await a.line("started", 20_000);
        provider.hold(jobKey("1"));
        provider.addJob("1");
        await waitFor("job 1's request", () => provider.requested(jobKey("1")) > 0, 20_000);
        const r = await cli([
          "maintenance",
          "start",
          "agent-3",
          "--id",
          "mw-9",
          "--drain-timeout",
          "300ms",
          "--wait",
          "--store",
          url,
        ]);
        assert.equal(r.code, 1, r.stderr);
        assert.match(
          r.stdout,
          /runtime agent-3 is NEEDS_REVIEW: drain deadline passed: 1 effect\(s\) dispatched but not acknowledged: quarantined/,
        );
        provider.release(jobKey("1"));
        assert.equal((await a.exit(20_000)).code, 3, "the agent reports NEEDS_REVIEW");
        const snap = (await store.journal.getRun(jobRunId("agent-3", "1")))!;
        assert.deepEqual(
          [snap.run.state, snap.effects[0]!.state],
          ["needs_review", "NEEDS_REVIEW"],
        );
        const st = JSON.parse(
          (await cli(["maintenance", "status", "agent-3", "--json", "--store", url])).stdout,
        ) as Status;
        assert.deepEqual([st.state, st.runsNeedingReview], ["NEEDS_REVIEW", 1]);
        const review = await cli(["runs", "list", "--state", "needs_review", "--store", url]);
        assert.match(review.stdout, /agent-3:job-1 +agent-3 +needs_review/);
        // The next process recovers before accepting work, and says what it found.
        const next = startAgent(url, "agent-3", provider);
        agents.push(next);
        const report = (await next.line("started", 20_000))!.report as { found: string };
        assert.match(report.found, /previous process ended in NEEDS_REVIEW \(maintenance mw-9\)/);
        await waitRuntimeState(store, "agent-3", "RUNNING");
        process.kill(next.pid, "SIGTERM");
        await next.exit(20_000);
        assert.equal(provider.executed(jobKey("1")), 1);
      }),
    ));

  test("bad input and refusals: one sentence each", () =>
    withLocation(b, "mw-bad", async (url) => {
      const cases: [string[], number, RegExp][] = [
        [["maintenance", "start", "nope", "--id", "mw-1"], 2, /no runtime named nope/],
        [["maintenance", "start", "a b", "--id", "mw-1"], 2, /runtime: "a b" is not valid/],
        [["maintenance", "start", "agent-1", "--id", "mw 1"], 2, /--id: "mw 1" is not valid/],
        [
          ["maintenance", "start", "agent-1"],
          2,
          /required option '--id <maintenance-id>' not specified/,
        ],
        [
          ["maintenance", "start", "agent-1", "--id", "mw-1", "--drain-timeout", "soon"],
          2,
          /--drain-timeout: drain_timeout: "soon" is not a duration/,
        ],
        [["maintenance", "status", "nope"], 2, /no runtime named nope/],
      ];
      for (const [args, code, want] of cases) {
        const r = await cli([...args, "--store", url]);
        assert.equal(r.code, code, `${args.join(" ")}: ${r.stderr}`);
        assert.match(r.stderr, want);
        assert.ok(hasNoStack(r));
      }
      const empty = await cli(["maintenance", "status", "--json", "--store", url]);
      assert.deepEqual(JSON.parse(empty.stdout), { runtimes: [] });
    }));
});
