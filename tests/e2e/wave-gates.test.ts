import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cli, startCli, waitFor } from "../support/cli.js";
import { eachBackend, hasNoStack, showLease, withLocation } from "../support/e2e.js";
import {
  createWave,
  explain,
  hostStates,
  makeFleet,
  runArgs,
  waitForLine,
  waveStatus,
} from "./wave-helpers.js";

await eachBackend("waves stop where they must", (b) => {
  test("the failure budget, counted over the whole wave, stops it", (t) =>
    withLocation(b, "wave-budget", async (url) => {
      const fleet = makeFleet(10, { failing: ["h2", "h4"] });
      t.after(fleet.cleanup);
      await createWave(url, "w", fleet, ["--batch", "2", "--max-failures", "1"]);
      const r = await cli(runArgs(url, "w", fleet, ["--concurrency", "1"]));
      assert.equal(r.code, 1, explain(r));
      assert.match(
        r.stdout,
        /wave w halted: failure budget spent: 2 host\(s\) failed, the wave allows 1/,
      );
      assert.deepEqual([...fleet.count("start").keys()], ["h1", "h2", "h3", "h4"]);
      const s = await waveStatus(url, "w");
      assert.equal(s.wave.state, "halted");
      assert.deepEqual(s.budget, {
        maxFailures: 1,
        failed: 2,
        spent: true,
        spec: "1",
        left: -1,
      } as never);
      assert.match(
        s.hosts.find((h) => h.host === "h2")!.reason!,
        /the patch command exited 3 \(last output: E: could not patch h2\)/,
      );
      assert.equal(s.counts.pending, 6);
      const check = await cli(["check", "--store", url]);
      assert.equal(check.code, 1, check.stdout);
      assert.match(
        check.stdout,
        /^QUIESCE WARNING - wave w halted: failure budget spent: .* \| .*waves_halted=1 wave_hosts_needing_review=0/,
      );
      // Running it again changes nothing: the budget is the wave's, not the run's.
      const again = await cli(runArgs(url, "w", fleet));
      assert.equal(again.code, 1, explain(again));
      assert.equal(fleet.count("start").size, 4);
    }));

  test("a failed health gate stops the wave before the next batch and says why", (t) =>
    withLocation(b, "wave-health", async (url) => {
      const fleet = makeFleet(9);
      t.after(fleet.cleanup);
      await createWave(url, "w", fleet, ["--batch", "3", "--max-failures", "5"]);
      const r = await cli(
        runArgs(url, "w", fleet, ["--health", `test {host} != h5 || (echo "h5 is down"; exit 1)`]),
      );
      assert.equal(r.code, 1, explain(r));
      assert.match(
        r.stdout,
        /wave w halted: health gate failed on h5: the health command exited 1 \(last output: h5 is down\)/,
      );
      const s = await waveStatus(url, "w");
      const st = hostStates(s);
      assert.equal(st.h5, "failed");
      assert.deepEqual([st.h4, st.h6], ["succeeded", "succeeded"], "its batch finished");
      assert.deepEqual([st.h7, st.h8, st.h9], ["pending", "pending", "pending"]);
      assert.equal(
        fleet.count("start").get("h7"),
        undefined,
        "no host of the next batch was touched",
      );
      assert.match(s.hosts.find((h) => h.host === "h5")!.reason!, /^health gate failed: /);
    }));

  test("wave stop: graceful (the host in flight finishes, no new one starts), through the maintenance protocol", (t) =>
    withLocation(b, "wave-stop", async (url) => {
      const fleet = makeFleet(6, { gated: ["h2"] });
      t.after(fleet.cleanup);
      await createWave(url, "w", fleet, ["--batch", "3"]);
      const agent = startCli(runArgs(url, "w", fleet, ["--concurrency", "1"]));
      await waitForLine(fleet, "start h2");
      const stop = startCli(["wave", "stop", "w", "--wait", "--timeout", "30s", "--store", url]);
      const status = await (async () => {
        for (;;) {
          const s = await waveStatus(url, "w");
          if (s.agent?.state === "DRAINING") return s;
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      assert.equal(hostStates(status).h2, "running");
      fleet.open("h2");
      const stopped = await stop.done;
      assert.equal(stopped.code, 0, explain(stopped));
      assert.match(
        stopped.stdout,
        /wave w is stopped: stop requested by .* 2 succeeded, 0 failed; 4 pending/,
      );
      const r = await agent.done;
      assert.equal(r.code, 0, explain(r));
      assert.deepEqual([...fleet.count("patched").keys()], ["h1", "h2"]);
      const s = await waveStatus(url, "w");
      assert.equal(s.wave.state, "stopped");
      assert.equal(s.agent?.state, "STOPPED");
      assert.equal(s.holder, null, "the wave's lease is released");
      const mw = await cli(["maintenance", "status", "wave:w", "--json", "--store", url]);
      assert.equal((JSON.parse(mw.stdout) as { state: string }).state, "STOPPED");
      const resumed = await cli(runArgs(url, "w", fleet));
      assert.equal(resumed.code, 0, explain(resumed));
      assert.equal(fleet.count("patched").size, 6);
    }));

  test("a second SIGTERM stops the host in flight: recorded unfinished with what is known before the lease is released; the next run settles it", (t) =>
    withLocation(b, "wave-forced", async (url) => {
      const fleet = makeFleet(4, { gated: ["h2"] });
      t.after(fleet.cleanup);
      await createWave(url, "w", fleet, ["--batch", "1"]);
      const agent = startCli(runArgs(url, "w", fleet, ["--grace", "2s"]));
      await waitForLine(fleet, "start h2");
      process.kill(agent.pid, "SIGTERM");
      await waitFor(
        "the drain to be recorded",
        async () => (await waveStatus(url, "w")).agent?.state === "DRAINING",
      );
      assert.equal(hostStates(await waveStatus(url, "w")).h2, "running", "h2 goes on draining");
      process.kill(agent.pid, "SIGTERM");
      const r = await agent.done;
      assert.equal(r.code, 143, explain(r));
      assert.match(
        r.stdout,
        /wave w stopped: SIGTERM received twice; 1 succeeded, 0 failed; 1 unfinished, 2 pending/,
      );

      const s = await waveStatus(url, "w");
      assert.deepEqual(hostStates(s), {
        h1: "succeeded",
        h2: "unfinished",
        h3: "pending",
        h4: "pending",
      });
      assert.match(
        s.hosts.find((h) => h.host === "h2")!.reason!,
        /while the patch command ran: whether it applied is unknown \(journal: DISPATCHED\)/,
      );
      assert.equal(s.wave.state, "stopped");
      assert.equal(s.holder, null, "the wave's lease is released after the states are written");
      assert.equal(await showLease(url, "host:h2"), null, "and the host's");
      assert.equal(s.agent?.state, "NEEDS_REVIEW", "a patch of unknown outcome is for review");
      assert.equal(fleet.count("patched").get("h2"), undefined, "the patch was cut off");

      // The next run asks --check (not patched) and patches h2 again; the rest once each.
      fleet.open("h2");
      const next = await cli(runArgs(url, "w", fleet, ["--check", fleet.check]));
      assert.equal(next.code, 0, explain(next));
      assert.deepEqual([...fleet.count("patched").entries()].sort(), [
        ["h1", 1],
        ["h2", 1],
        ["h3", 1],
        ["h4", 1],
      ]);
      assert.equal(fleet.count("start").get("h2"), 2);
      assert.equal((await waveStatus(url, "w")).counts.succeeded, 4);
    }));

  for (const [point, known] of [
    ["wave.host-running", /before the patch was sent: nothing ran on the host/],
    ["effect.after-dispatch", /while the patch command ran: whether it applied is unknown/],
  ] as const)
    test(`an internal error (a bug, injected at ${point}) is a controlled exit: the host in flight recorded unfinished, leases released, exit 1 in one line`, (t) =>
      withLocation(b, `wave-bug-${point}`, async (url) => {
        const fleet = makeFleet(3);
        t.after(fleet.cleanup);
        await createWave(url, "w", fleet, ["--batch", "1"]);
        const r = await cli(runArgs(url, "w", fleet, ["--check", fleet.check]), {
          QUIESCE_CRASH_AT: `${point}:throw`,
        });
        assert.equal(r.code, 1, explain(r));
        assert.match(r.stderr, /quiesce: internal error: injected failure at/);
        assert.ok(hasNoStack(r), r.stderr);
        const s = await waveStatus(url, "w");
        assert.deepEqual(hostStates(s), { h1: "unfinished", h2: "pending", h3: "pending" });
        assert.match(s.hosts[0]!.reason!, known);
        assert.equal(s.wave.state, "stopped");
        assert.match(s.wave.reason!, /stopped by an error: injected failure/);
        assert.equal(s.holder, null, "the wave's lease is released");
        assert.equal(await showLease(url, "host:h1"), null, "and the host's");

        const next = await cli(runArgs(url, "w", fleet, ["--check", fleet.check]));
        assert.equal(next.code, 0, explain(next));
        assert.deepEqual([...fleet.count("patched").entries()].sort(), [
          ["h1", 1],
          ["h2", 1],
          ["h3", 1],
        ]);
      }));

  test("bad input: one sentence, exit 2, nothing written", (t) =>
    withLocation(b, "wave-bad-input", async (url) => {
      const fleet = makeFleet(3);
      t.after(fleet.cleanup);
      const write = (name: string, text: string) => {
        const p = join(fleet.dir, name);
        writeFileSync(p, text);
        return p;
      };
      const empty = write("empty", "# nothing here\n\n");
      const dupes = write("dupes", "a\nb\na\n");
      const cases: [string[], RegExp][] = [
        [["--hosts", empty], /no hosts \(one host a line/],
        [["--hosts", dupes], /host a is listed twice \(lines 1 and 3\)/],
        [
          ["--hosts", fleet.hostsFile, "--batch", "0"],
          /--batch: a batch of 0 hosts would never patch anything/,
        ],
        [
          ["--hosts", fleet.hostsFile, "--max-failures", "150%"],
          /--max-failures: 150% is over 100% of the hosts/,
        ],
        [
          ["--hosts", fleet.hostsFile, "--window", "Sat 2am-6am"],
          /--window: "Sat 2am-6am" is not a window/,
        ],
        [
          ["--hosts", fleet.hostsFile, "--max-per-group", "0"],
          /--max-per-group: "0" is not a positive whole number/,
        ],
        [["--hosts", join(fleet.dir, "missing")], /--hosts: cannot read/],
      ];
      for (const [args, message] of cases) {
        const r = await cli(["wave", "create", "w", ...args, "--store", url]);
        assert.equal(r.code, 2, `${args.join(" ")}: ${explain(r)}`);
        assert.match(r.stderr, message);
        assert.equal(r.stderr.trim().split("\n").length, 1, "one sentence");
        assert.ok(hasNoStack(r));
      }
      if (b.name === "sqlite")
        assert.equal(existsSync(url), false, "the store was never even opened");
      const run = await cli(["wave", "run", "w", "--patch", "ssh {hots} true", "--store", url]);
      assert.equal(run.code, 2);
      assert.match(run.stderr, /--patch: unknown placeholder \{hots\}/);
      // Read-only commands never create the store either.
      const list = await cli(["wave", "status", "--store", url]);
      assert.equal(list.code, 1, explain(list));
      assert.match(list.stderr, /no quiesce store at/);
      const missing = await cli(["wave", "run", "w", "--patch", "true", "--store", url]);
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /no wave named w/);
    }));
});
