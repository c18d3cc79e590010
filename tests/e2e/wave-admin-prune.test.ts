import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cli } from "../support/cli.js";
import { eachBackend, events, withLocation } from "../support/e2e.js";
import type { Backend } from "../support/backends.js";
import {
  createWave,
  explain,
  hostStates,
  makeFleet,
  runArgs,
  waveStatus,
  type Fleet,
} from "./wave-helpers.js";

/** From now on every host's patch succeeds. */
function healPatch(fleet: Fleet): void {
  writeFileSync(
    join(fleet.dir, "patch.sh"),
    `#!/bin/sh\necho "start $1" >> ${fleet.log}\necho "patched $1" >> ${fleet.log}\n`,
  );
}

/** Moves every time of the store 200 days back (what time would do). */
function age(b: Backend, url: string): Promise<void> {
  const DAYS = 200;
  return b.name === "sqlite"
    ? b.rawSql(
        url,
        `UPDATE quiesce_runs SET updated_at = updated_at - ${DAYS} * 86400000;
         UPDATE quiesce_waves SET updated_at = updated_at - ${DAYS} * 86400000,
                                  finished_at = finished_at - ${DAYS} * 86400000;
         UPDATE quiesce_events SET at = at - ${DAYS} * 86400000;`,
      )
    : b.rawSql(
        url,
        `UPDATE quiesce_runs SET updated_at = updated_at - interval '${DAYS} days';
         UPDATE quiesce_waves SET updated_at = updated_at - interval '${DAYS} days',
                                  finished_at = finished_at - interval '${DAYS} days';
         UPDATE quiesce_events SET at = at - interval '${DAYS} days';`,
      );
}

await eachBackend("wave retry, wave delete, store prune", (b) => {
  test("wave retry puts failed hosts back to pending (recorded), refused while an agent holds the wave; the next run patches only them; delete", (t) =>
    withLocation(b, "wave-retry", async (url) => {
      const s = ["--store", url];
      const fleet = makeFleet(3, { failing: ["h2"] });
      t.after(fleet.cleanup);
      await createWave(url, "w", fleet, ["--max-failures", "1"]);
      const first = await cli(runArgs(url, "w", fleet));
      assert.equal(first.code, 1, explain(first));
      assert.equal((await waveStatus(url, "w")).wave.state, "completed");

      // An agent holds the wave's lease: retry and delete are refused, nothing changes.
      const agent = await cli(["lock", "acquire", "wave:w", "--ttl", "1m", ...s]);
      assert.equal(agent.code, 0, agent.stderr);
      const token = agent.stdout.trim();
      for (const args of [
        ["wave", "retry", "w"],
        ["wave", "delete", "w"],
      ]) {
        const r = await cli([...args, ...s]);
        assert.equal(r.code, 75, explain(r));
        assert.match(
          r.stderr,
          /^quiesce: wave w is being run by an agent \(run .*, token \d+\): stop it first \(quiesce wave stop w --wait\), then (retry its hosts|delete it)\n$/,
        );
      }
      assert.equal(hostStates(await waveStatus(url, "w")).h2, "failed");
      assert.equal((await cli(["lock", "release", "wave:w", "--token", token, ...s])).code, 0);

      const notFailed = await cli(["wave", "retry", "w", "--hosts", "h1", ...s]);
      assert.equal(notFailed.code, 2);
      assert.equal(
        notFailed.stderr,
        "quiesce: host h1 of wave w is succeeded, not failed: only failed hosts are retried\n",
      );
      const noHost = await cli(["wave", "retry", "w", "--hosts", "h9", ...s]);
      assert.equal(noHost.code, 2);
      assert.equal(noHost.stderr, "quiesce: wave w has no host h9\n");

      const retry = await cli(["wave", "retry", "w", "--json", ...s]);
      assert.equal(retry.code, 0, explain(retry));
      assert.deepEqual((JSON.parse(retry.stdout) as { retried: string[] }).retried, ["h2"]);
      const after = await waveStatus(url, "w");
      assert.deepEqual(hostStates(after), { h1: "succeeded", h2: "pending", h3: "succeeded" });
      assert.equal(after.wave.state, "stopped");
      const retried = (await events(url, "wave:w")).filter((e) => e.kind === "wave.retried");
      assert.equal(retried.length, 1);
      assert.match(retried[0]!.message, /^wave w: failed host\(s\) put back to pending by .+: h2$/);

      healPatch(fleet);
      const second = await cli(runArgs(url, "w", fleet));
      assert.equal(second.code, 0, explain(second));
      assert.deepEqual(Object.fromEntries(fleet.count("patched")), { h1: 1, h2: 1, h3: 1 });
      assert.equal(fleet.count("start").get("h2"), 2);
      const done = await waveStatus(url, "w");
      assert.equal(done.wave.state, "completed");
      assert.equal(hostStates(done).h2, "succeeded");

      const nothing = await cli(["wave", "retry", "w", ...s]);
      assert.equal(nothing.code, 0);
      assert.equal(nothing.stdout, "wave w has no failed host: nothing to retry\n");

      const del = await cli(["wave", "delete", "w", ...s]);
      assert.equal(del.code, 0, explain(del));
      assert.equal(del.stdout, "wave w deleted with its hosts and their journal runs\n");
      const gone = await cli(["wave", "status", "w", ...s]);
      assert.equal(gone.code, 2, explain(gone));
      const run = await cli(["runs", "show", "wave:w:h2", ...s]);
      assert.notEqual(run.code, 0, "the host's journal run went with the wave");
      assert.equal(
        (await events(url, "wave:w")).filter((e) => e.kind === "wave.deleted").length,
        1,
      );
      const again = await cli(["wave", "delete", "w", ...s]);
      assert.equal(again.code, 2);
      assert.match(again.stderr, /no wave named w/);
    }));

  test("store prune deletes finished runs, completed waves and events older than --older-than, keeps halted waves, says how much", (t) =>
    withLocation(b, "prune", async (url) => {
      const s = ["--store", url];
      const ok = makeFleet(1);
      const bad = makeFleet(1, { failing: ["h1"] });
      t.after(ok.cleanup);
      t.after(bad.cleanup);
      await createWave(url, "done", ok);
      assert.equal((await cli(runArgs(url, "done", ok))).code, 0);
      await createWave(url, "stuck", bad);
      assert.equal((await cli(runArgs(url, "stuck", bad))).code, 1);
      assert.equal((await waveStatus(url, "stuck")).wave.state, "halted");

      const fresh = await cli(["store", "prune", "--older-than", "90d", ...s]);
      assert.equal(fresh.code, 0, explain(fresh));
      assert.match(
        fresh.stdout,
        /^pruned 0 finished run\(s\) \(0 effect\(s\)\), 0 completed wave\(s\) and 0 event\(s\) older than 90d/,
      );

      await age(b, url);
      const r = await cli(["store", "prune", "--older-than", "90d", "--json", ...s]);
      assert.equal(r.code, 0, explain(r));
      const j = JSON.parse(r.stdout) as Record<string, unknown>;
      assert.equal(j.runs, 2, r.stdout);
      assert.equal(j.effects, 2, r.stdout);
      assert.equal(j.waves, 1, r.stdout);
      assert.ok((j.events as number) > 5, r.stdout);
      assert.equal(j.olderThanMs, 90 * 86_400_000);
      assert.ok(!Number.isNaN(Date.parse(j.before as string)));

      assert.equal(
        (await cli(["wave", "status", "done", ...s])).code,
        2,
        "the completed wave went",
      );
      assert.equal((await waveStatus(url, "stuck")).wave.state, "halted", "a halted wave stays");
      const left = await events(url);
      // The first prune's own event was aged with the rest: only this prune's event is left.
      assert.deepEqual(
        left.map((e) => e.kind),
        ["store.pruned"],
      );
      const again = JSON.parse(
        (await cli(["store", "prune", "--older-than", "90d", "--json", ...s])).stdout,
      ) as Record<string, number>;
      assert.deepEqual([again.runs, again.waves, again.events], [0, 0, 0]);

      const badAge = await cli(["store", "prune", "--older-than", "90", ...s]);
      assert.equal(badAge.code, 2);
      assert.match(badAge.stderr, /^quiesce: --older-than: "90" is not a duration/);
    }));
});
