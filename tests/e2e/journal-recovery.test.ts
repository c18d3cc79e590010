import assert from "node:assert/strict";
import { test } from "node:test";
import { jobKey, jobRunId } from "../../src/ops/drill/jobs.js";
import { waitFor } from "../support/cli.js";
import { eachBackend, events, withLocation } from "../support/e2e.js";
import { startAgent, withRig } from "./journal-helpers.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Recovery against records it must not trust, and writers that must not write (I3, I9). */
await eachBackend("journal recovery and fencing with real processes", (b) => {
  test("a record changed while the agent was down stops recovery: NEEDS_REVIEW, nothing advanced, the provider untouched", () =>
    withLocation(b, "tamper", async (url) =>
      withRig(url, "full", async ({ provider, store, agents }) => {
        const a = startAgent(url, "agent-t", provider, "effect.after-ack");
        agents.push(a);
        provider.addJob("1");
        assert.equal((await a.exit(20_000)).signal, "SIGKILL");
        const runId = jobRunId("agent-t", "1");
        const before = (await store.journal.getRun(runId))!.effects[0]!;
        assert.equal(before.state, "DISPATCHED");
        await b.rawSql(
          url,
          `UPDATE quiesce_effects SET request = '{"job":"1","amount":500}' WHERE run_id = '${runId}'`,
        );
        const seen = {
          requests: provider.requested(jobKey("1")),
          lookups: provider.lookedUp(jobKey("1")),
        };

        const r = startAgent(url, "agent-t", provider);
        agents.push(r);
        const report = (await r.line("started", 20_000))!.report as {
          recovered: { runId: string; after: string; problems: string[] }[];
        };
        assert.deepEqual(
          report.recovered.map((x) => [x.runId, x.after]),
          [[runId, "needs_review"]],
        );
        assert.match(
          report.recovered[0]!.problems.join(),
          /effect job:1:charge failed validation: checksum mismatch/,
        );
        const snap = (await store.journal.getRun(runId))!;
        assert.equal(snap.run.state, "needs_review");
        assert.match(snap.run.reviewReason ?? "", /recovery refused to advance/);
        assert.deepEqual(
          [snap.effects[0]!.state, snap.effects[0]!.checksum],
          ["DISPATCHED", before.checksum],
        );
        assert.deepEqual(
          { requests: provider.requested(jobKey("1")), lookups: provider.lookedUp(jobKey("1")) },
          seen,
        );
        process.kill(r.pid, "SIGTERM");
        assert.equal((await r.exit(20_000)).code, 0);
      }),
    ));

  test("a zombie agent (stopped past its TTL while its lease moved on) changes nothing in the journal and exits 76", () =>
    withLocation(b, "zombie", async (url) =>
      withRig(url, "full", async ({ provider, store, agents }) => {
        const a = startAgent(url, "agent-z", provider);
        agents.push(a);
        await a.line("started", 20_000);
        provider.hold(jobKey("1"));
        provider.addJob("1");
        await waitFor("job 1's request", () => provider.requested(jobKey("1")) > 0, 20_000);
        const runId = jobRunId("agent-z", "1");
        const before = (await store.journal.getRun(runId))!;
        process.kill(a.pid, "SIGSTOP");
        await sleep(1500);
        // Meanwhile the lease moves on (as a takeover or a break would do).
        const later =
          b.name === "postgres"
            ? "clock_timestamp() + interval '1 hour'"
            : String(Date.now() + 3_600_000);
        const moveOn = `UPDATE quiesce_leases SET token = token + 1, expires_at = ${later} WHERE scope = 'runtime:agent-z'`;
        for (let attempt = 1; ; attempt++) {
          try {
            await b.rawSql(url, moveOn);
            break;
          } catch (e) {
            // SQLite: the agent was stopped inside a write transaction (a renewal) and holds
            // the file's write lock. Let it finish that write, stop it again, try again.
            if ((e as { code?: string }).code !== "SQLITE_BUSY" || attempt >= 20) throw e;
            process.kill(a.pid, "SIGCONT");
            await sleep(20);
            process.kill(a.pid, "SIGSTOP");
            await sleep(50);
          }
        }
        provider.release(jobKey("1")); // its acknowledgement is waiting when the zombie wakes up
        process.kill(a.pid, "SIGCONT");
        const exit = await a.exit(20_000);
        assert.equal(exit.code, 76, `the zombie exits 76 (lease lost); ${a.stderr}`);
        const after = (await store.journal.getRun(runId))!;
        assert.deepEqual(
          [after.run.seq, after.run.state, after.effects[0]!.state, after.effects[0]!.checksum],
          [before.run.seq, before.run.state, "DISPATCHED", before.effects[0]!.checksum],
          "no journal write of the zombie went through",
        );
        assert.equal(
          (await store.journal.getRuntime("agent-z")).runtime!.state,
          "RUNNING",
          "nor a runtime record write",
        );
        const ev = await events(url, "runtime:agent-z");
        const token = before.run.token;
        assert.ok(ev.some((e) => e.kind === "lease.lost" && e.token === token));
        for (const e of ev.filter((x) => x.kind === "lease.fenced_write_rejected"))
          assert.equal(e.token, token);
        assert.equal(provider.executed(jobKey("1")), 1);
      }),
    ));
});
