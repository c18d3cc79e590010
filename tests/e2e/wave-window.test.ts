import assert from "node:assert/strict";
import { test } from "node:test";
import { cli, startCli, waitFor } from "../support/cli.js";
import { eachBackend, withLocation } from "../support/e2e.js";
import { createWave, explain, makeFleet, runArgs, waveStatus } from "./wave-helpers.js";

/** `HH:MM` in UTC, `minutes` from now. */
function utcClock(minutes: number): string {
  const d = new Date(Date.now() + minutes * 60_000);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}`;
}

await eachBackend("wave: the maintenance window", (b) => {
  test("outside the window no host starts: the agent waits for it (a stop ends the wait)", (t) =>
    withLocation(b, "wave-window-closed", async (url) => {
      const fleet = makeFleet(3);
      t.after(fleet.cleanup);
      const window = `daily ${utcClock(120)}-${utcClock(180)} UTC`;
      await createWave(url, "w", fleet, ["--window", window]);
      const agent = startCli(runArgs(url, "w", fleet));
      await waitFor("the agent to wait for the window", () =>
        agent.stderr().includes(`outside the window ${window}: waiting`),
      );
      const s = await waveStatus(url, "w");
      assert.equal(s.wave.state, "running");
      assert.equal(s.counts.pending, 3, "no host started");
      const stop = await cli(["wave", "stop", "w", "--wait", "--store", url]);
      assert.equal(stop.code, 0, explain(stop));
      const r = await agent.done;
      assert.equal(r.code, 0, explain(r));
      assert.match(
        r.stdout,
        /wave w stopped: stop requested by .*; 0 succeeded, 0 failed; 3 pending/,
      );
      assert.deepEqual(fleet.lines(), [], "nothing was patched");
    }));

  test("inside the window the wave runs", (t) =>
    withLocation(b, "wave-window-open", async (url) => {
      const fleet = makeFleet(3);
      t.after(fleet.cleanup);
      await createWave(url, "w", fleet, ["--window", `${utcClock(-60)}-${utcClock(60)} UTC`]);
      const r = await cli(runArgs(url, "w", fleet));
      assert.equal(r.code, 0, explain(r));
      assert.match(r.stdout, /wave w completed: 3 succeeded, 0 failed/);
      assert.equal(fleet.count("patched").size, 3);
    }));
});
