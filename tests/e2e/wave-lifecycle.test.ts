import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { cli, isAlive, startCli } from "../support/cli.js";
import { eachBackend, withLocation } from "../support/e2e.js";
import {
  createWave,
  explain,
  makeFleet,
  runArgs,
  waitForLine,
  waveStatus,
} from "./wave-helpers.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Live processes whose command line contains `needle`. */
function processesRunning(needle: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").includes(needle))
        if (isAlive(Number(name))) out.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return out;
}

await eachBackend("wave: a host's patch never outlives the host's lease (I11)", (b) => {
  test("a wave agent frozen past its TTL: the patch in flight is stopped by its deadline guard; the next agent patches the host again, once", (t) =>
    withLocation(b, "wave-frozen", async (url) => {
      const fleet = makeFleet(3, { gated: ["h2"] });
      t.after(fleet.cleanup);
      await createWave(url, "w", fleet, ["--batch", "1"]);
      const agent = startCli(runArgs(url, "w", fleet, ["--check", fleet.check, "--grace", "1s"]));
      t.after(() => {
        if (isAlive(agent.pid)) process.kill(agent.pid, "SIGKILL");
      });
      await waitForLine(fleet, "start h2");
      const patchOfH2 = `${fleet.dir}/patch.sh h2`;
      assert.ok(processesRunning(patchOfH2).length > 0, "h2's patch runs");
      process.kill(agent.pid, "SIGSTOP");
      await sleep(3000); // TTL 1s: the host lease's deadline and the grace pass meanwhile
      assert.deepEqual(processesRunning(patchOfH2), [], "the frozen agent's patch was stopped");
      process.kill(agent.pid, "SIGCONT");
      const z = await agent.done;
      assert.equal(z.code, 76, explain(z));

      fleet.open("h2");
      const next = await cli([
        ...runArgs(url, "w", fleet, ["--check", fleet.check]),
        "--wait",
        "20s",
      ]);
      assert.equal(next.code, 0, explain(next));
      assert.equal(fleet.count("start").get("h2"), 2, "started again: the first was cut off");
      assert.equal(fleet.count("patched").get("h2"), 1, "and patched once");
      assert.equal((await waveStatus(url, "w")).counts.succeeded, 3);
    }));
});
