import assert from "node:assert/strict";
import { test } from "node:test";
import { cli, isAlive, startCli, waitFor } from "../support/cli.js";
import { eachBackend, events, showLease, withLocation } from "../support/e2e.js";
import {
  createWave,
  explain,
  hostStates,
  makeFleet,
  runArgs,
  waitForLine,
  waveStatus,
} from "./wave-helpers.js";

/** Every host of the fleet (h1..hN) exactly once in the log, as `kind`. */
function assertOnce(counts: Map<string, number>, n: number, kind: string): void {
  for (let i = 1; i <= n; i++)
    assert.equal(counts.get(`h${i}`) ?? 0, 1, `h${i} ${kind} ${counts.get(`h${i}`) ?? 0} times`);
  assert.equal(counts.size, n);
}

await eachBackend("wave resume after the agent is SIGKILLed mid-batch", (b) => {
  test("50 hosts: a second agent takes over and finishes; every host patched exactly once, the host in flight settled by --check", (t) =>
    withLocation(b, "wave-resume", async (url) => {
      // h23's patch ignores TERM and the first agent gives its commands a long grace: its
      // deadline guard TERMs it when the dead agent's host lease runs out (I11), and it goes on
      // until the gate opens, as a patch that must not be cut short would.
      const fleet = makeFleet(50, { gated: ["h23"], ignoreTerm: true });
      t.after(fleet.cleanup);
      await createWave(url, "w", fleet, ["--batch", "10"]);
      const check = ["--check", fleet.check];
      const first = startCli(
        runArgs(url, "w", fleet, [...check, "--concurrency", "4", "--grace", "60s"]),
      );
      // h23 blocks mid-patch: batch 3 is in flight when the agent dies.
      await waitForLine(fleet, "start h23");
      process.kill(first.pid, "SIGKILL");
      await first.exited;
      const atKill = await waveStatus(url, "w");
      assert.equal(hostStates(atKill).h23, "running", "the agent died with h23 in flight");
      assert.equal(atKill.holder?.token, 1);

      const second = startCli([
        ...runArgs(url, "w", fleet, [...check, "--concurrency", "4", "--leftover-wait", "60s"]),
        "--wait",
        "20s",
      ]);
      // The new agent took the wave over (proof of death), but not h23: its patch still runs.
      await waitFor(
        "the takeover of the wave",
        async () => (await showLease(url, "wave:w"))?.token === 2,
      );
      await waitFor("a refused takeover of h23 (its patch still runs)", async () =>
        (await events(url, "host:h23")).some((e) => e.kind === "lease.takeover_refused"),
      );
      assert.equal(
        fleet.count("start").get("h23"),
        1,
        "h23 is not patched again while its patch runs",
      );
      fleet.open("h23");
      const r = await second.done;
      assert.equal(r.code, 0, explain(r));
      assert.match(r.stdout, /wave w completed: 50 succeeded, 0 failed/);

      assertOnce(fleet.count("start"), 50, "started");
      assertOnce(fleet.count("patched"), 50, "patched");
      const s = await waveStatus(url, "w");
      assert.equal(s.wave.state, "completed");
      assert.equal(s.counts.succeeded, 50);
      const h23 = s.hosts.find((h) => h.host === "h23")!;
      assert.equal(h23.reason, "the --check command says it is patched");

      const run = await cli(["runs", "show", "wave:w:h23", "--json", "--store", url]);
      const effect = (
        JSON.parse(run.stdout) as { effects: { state: string; attempt: number; result: string }[] }
      ).effects[0]!;
      assert.equal(effect.state, "OBSERVED");
      assert.equal(effect.attempt, 1, "dispatched once, by the first agent");
      assert.equal((JSON.parse(effect.result) as { via: string }).via, "check");
      const wave = await events(url, "wave:w");
      const taken = wave.find((e) => e.kind === "lease.taken_over")!;
      assert.equal(taken.token, 2);
      assert.ok(wave.some((e) => e.kind === "wave.state" && /took over from run/.test(e.message)));
    }));

  test("a zombie agent (SIGSTOPped past its TTL) writes nothing once it wakes: exit 76, no new host; the next agent settles its host", (t) =>
    withLocation(b, "wave-zombie", async (url) => {
      // h2's patch ignores the TERM its deadline guard sends while the agent is frozen, and
      // lives through the long grace (see the test above).
      const fleet = makeFleet(6, { gated: ["h2"], ignoreTerm: true });
      t.after(fleet.cleanup);
      await createWave(url, "w", fleet, ["--batch", "1"]);
      const zombie = startCli(runArgs(url, "w", fleet, ["--check", fleet.check, "--grace", "60s"]));
      t.after(() => {
        if (isAlive(zombie.pid)) process.kill(zombie.pid, "SIGKILL");
      });
      await waitForLine(fleet, "start h2");
      const before = await waveStatus(url, "w");
      assert.equal(hostStates(before).h1, "succeeded");
      assert.equal(hostStates(before).h2, "running");

      process.kill(zombie.pid, "SIGSTOP");
      await waitFor(
        "the wave's lease to expire on the store clock",
        async () => (await showLease(url, "wave:w"))?.expired === true,
      );
      // Its patch (in its own process group) finishes while the agent is frozen.
      fleet.open("h2");
      await waitForLine(fleet, "patched h2");
      process.kill(zombie.pid, "SIGCONT");
      const z = await zombie.done;
      assert.equal(z.code, 76, explain(z));
      assert.match(z.stdout, /lost the wave's lease/);

      const after = await waveStatus(url, "w");
      assert.deepEqual(hostStates(after), hostStates(before), "the zombie changed no host");
      assert.equal(after.wave.state, "running", "nor the wave: a dead agent's wave stays running");
      assert.equal(after.holder?.token, 1);
      assert.equal(after.holder?.state, "expired");
      assert.deepEqual(
        fleet.lines(),
        ["start h1", "patched h1", "start h2", "patched h2"],
        "no host started after the lease was lost",
      );
      assert.ok((await events(url, "wave:w")).some((e) => e.kind === "lease.lost"));

      const next = await cli([
        ...runArgs(url, "w", fleet, ["--check", fleet.check]),
        "--wait",
        "20s",
      ]);
      assert.equal(next.code, 0, explain(next));
      assert.equal((await showLease(url, "wave:w")) === null, true, "released at the end");
      assertOnce(fleet.count("start"), 6, "started");
      assertOnce(fleet.count("patched"), 6, "patched");
      const done = await waveStatus(url, "w");
      assert.equal(done.counts.succeeded, 6);
      assert.equal(
        done.hosts.find((h) => h.host === "h2")!.reason,
        "the --check command says it is patched",
      );
    }));

  test("without --check (and not --idempotent) the host in flight goes to needs_review and the wave stops", (t) =>
    withLocation(b, "wave-review", async (url) => {
      const fleet = makeFleet(20, { gated: ["h7"] });
      t.after(fleet.cleanup);
      await createWave(url, "w", fleet, ["--batch", "5"]);
      const first = startCli(runArgs(url, "w", fleet, ["--concurrency", "1"]));
      await waitForLine(fleet, "start h7");
      process.kill(first.pid, "SIGKILL");
      await first.exited;
      fleet.open("h7"); // the orphaned patch ends; nobody knows whether it applied
      await waitForLine(fleet, "patched h7");
      const started = fleet.count("start");

      const r = await cli([...runArgs(url, "w", fleet), "--wait", "20s"]);
      assert.equal(r.code, 1, explain(r));
      assert.match(
        r.stdout,
        /wave w halted: host h7 needs review: whether the patch landed is unknown/,
      );
      assert.deepEqual(fleet.count("start"), started, "no host was touched after the review");
      const s = await waveStatus(url, "w");
      assert.equal(s.wave.state, "halted");
      assert.equal(hostStates(s).h7, "needs_review");
      assert.match(
        s.hosts.find((h) => h.host === "h7")!.reason!,
        /DISPATCHED without an acknowledgement/,
      );
      assert.equal(s.counts.pending, 20 - started.size);
      assert.deepEqual(
        s.review.map((x) => x.resolve),
        [
          'quiesce runs resolve wave:w:h7 --effect wave:w:host:h7:patch --as observed|not-sent --reason "..."',
        ],
      );
      assert.equal(s.agent?.state, "NEEDS_REVIEW");
      const check = await cli(["check", "--format", "json", "--store", url]);
      assert.equal(check.code, 1, `the daily check warns: ${check.stdout}`);
      const report = JSON.parse(check.stdout) as {
        counts: Record<string, number>;
        findings: { code: string; subject: string; message: string }[];
      };
      assert.equal(report.counts.waves_halted, 1);
      assert.equal(report.counts.wave_hosts_needing_review, 1);
      const found = report.findings.map((f) => `${f.code} ${f.subject}`);
      assert.ok(found.includes("wave_needs_review wave:w"), found.join("; "));
      assert.ok(found.includes("run_needs_review wave:w:h7"), found.join("; "));

      // A human looks, records what happened, and the wave goes on without patching h7 again.
      const resolved = await cli([
        "runs",
        "resolve",
        "wave:w:h7",
        "--effect",
        "wave:w:host:h7:patch",
        "--as",
        "observed",
        "--reason",
        "the patch log shows it",
        "--store",
        url,
      ]);
      assert.equal(resolved.code, 0, explain(resolved));
      const again = await cli(runArgs(url, "w", fleet));
      assert.equal(again.code, 0, explain(again));
      assert.equal(fleet.count("start").get("h7"), 1);
      assert.equal((await waveStatus(url, "w")).counts.succeeded, 20);
      const ok = await cli(["check", "--store", url]);
      assert.equal(ok.code, 0, `nothing left for a person: ${ok.stdout}`);
    }));
});
