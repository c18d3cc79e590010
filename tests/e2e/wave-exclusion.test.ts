import assert from "node:assert/strict";
import { test } from "node:test";
import { cli, startCli } from "../support/cli.js";
import { eachBackend, events, withLocation } from "../support/e2e.js";
import {
  createWave,
  explain,
  hostStates,
  makeFleet,
  runArgs,
  waitForLine,
  waveStatus,
} from "./wave-helpers.js";

await eachBackend("one wave, one agent; other systems' host leases are respected", (b) => {
  test("two agents started on the same wave: one runs it, the other exits 75 at once", (t) =>
    withLocation(b, "wave-two-agents", async (url) => {
      const fleet = makeFleet(4, { gated: ["h2"] });
      t.after(fleet.cleanup);
      await createWave(url, "w", fleet, ["--batch", "2"]);
      const first = startCli(runArgs(url, "w", fleet));
      await waitForLine(fleet, "start h2");
      const second = await cli(runArgs(url, "w", fleet));
      assert.equal(second.code, 75, explain(second));
      assert.match(
        second.stderr + second.stdout,
        /wave w is being run by another agent: wave:w is held by run r-[0-9a-f-]+, on .*, pid \d+/,
      );
      fleet.open("h2");
      const r = await first.done;
      assert.equal(r.code, 0, explain(r));
      for (const [h, n] of fleet.count("start")) assert.equal(n, 1, `${h} started ${n} times`);
      assert.equal((await waveStatus(url, "w")).counts.succeeded, 4);
    }));

  test("a host held by --system backup is skipped, never patched under that lease, and patched once it is free", (t) =>
    withLocation(b, "wave-backup", async (url) => {
      const fleet = makeFleet(6);
      t.after(fleet.cleanup);
      await createWave(url, "w", fleet, ["--batch", "3"]);
      const backup = await cli([
        "lock",
        "acquire",
        "host:h3",
        "--ttl",
        "2m",
        "--system",
        "backup",
        "--store",
        url,
      ]);
      assert.equal(backup.code, 0, explain(backup));
      const token = backup.stdout.trim();

      const r = await cli(runArgs(url, "w", fleet));
      assert.equal(r.code, 75, `hosts were left busy: run again later; ${explain(r)}`);
      assert.match(r.stdout, /5 succeeded, 0 failed; 1 skipped \(busy\)/);
      assert.equal(fleet.count("start").get("h3"), undefined, "h3 was never touched");
      const s = await waveStatus(url, "w");
      assert.equal(hostStates(s).h3, "skipped");
      assert.match(s.hosts.find((h) => h.host === "h3")!.reason!, /of system "backup"/);
      const h3 = await events(url, "host:h3");
      assert.equal(h3.filter((e) => e.kind === "lease.acquired").length, 1, "only backup's own");

      const released = await cli(["lock", "release", "host:h3", "--token", token, "--store", url]);
      assert.equal(released.code, 0, explain(released));
      const again = await cli(runArgs(url, "w", fleet));
      assert.equal(again.code, 0, explain(again));
      assert.equal(fleet.count("patched").get("h3"), 1);
      assert.equal(fleet.count("patched").get("h1"), 1, "succeeded hosts are not patched again");
      assert.equal((await waveStatus(url, "w")).wave.state, "completed");
    }));

  test("--host-wait waits for a busy host instead of skipping it", (t) =>
    withLocation(b, "wave-host-wait", async (url) => {
      const fleet = makeFleet(2);
      t.after(fleet.cleanup);
      await createWave(url, "w", fleet, ["--batch", "2"]);
      const backup = await cli([
        "lock",
        "acquire",
        "host:h2",
        "--ttl",
        "2m",
        "--system",
        "backup",
        "--store",
        url,
      ]);
      const agent = startCli(runArgs(url, "w", fleet, ["--host-wait", "30s"]));
      await waitForLine(fleet, "patched h1");
      assert.equal(fleet.count("start").get("h2"), undefined);
      await cli(["lock", "release", "host:h2", "--token", backup.stdout.trim(), "--store", url]);
      const r = await agent.done;
      assert.equal(r.code, 0, explain(r));
      assert.equal(fleet.count("patched").get("h2"), 1);
    }));
});
