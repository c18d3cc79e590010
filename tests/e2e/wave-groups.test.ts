import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cli } from "../support/cli.js";
import { eachBackend, withLocation } from "../support/e2e.js";
import { createWave, explain, makeFleet, runArgs } from "./wave-helpers.js";

await eachBackend("wave: per-group limits", (b) => {
  test("--max-per-group 1: never two hosts of one group in maintenance at once, groups in parallel", (t) =>
    withLocation(b, "wave-groups", async (url) => {
      const fleet = makeFleet(9, { groups: 3 });
      t.after(fleet.cleanup);
      await createWave(url, "w", fleet, ["--batch", "9", "--max-per-group", "1"]);
      // The patch holds a directory per group while it runs: a second host of the same group
      // finds it taken and says so; `busy` counts the hosts in maintenance at once.
      const dir = fleet.dir;
      const out = join(dir, "groups.log");
      const patch =
        `if mkdir ${dir}/in-{group} 2>/dev/null; then :; else echo "overlap {group} {host}" >> ${out}; fi; ` +
        `echo "in {host} $(ls -d ${dir}/in-* | wc -l)" >> ${out}; sleep 0.3; rmdir ${dir}/in-{group}`;
      const r = await cli([
        ...runArgs(url, "w", fleet, ["--concurrency", "9"]),
        "--patch",
        patch, // the last --patch wins
      ]);
      assert.equal(r.code, 0, explain(r));
      assert.match(r.stdout, /wave w completed: 9 succeeded, 0 failed/);
      const lines = existsSync(out) ? readFileSync(out, "utf8").trim().split("\n") : [];
      assert.deepEqual(
        lines.filter((l) => l.startsWith("overlap")),
        [],
        "no two hosts of a group overlapped",
      );
      assert.equal(lines.filter((l) => l.startsWith("in ")).length, 9, "every host ran once");
      const most = Math.max(...lines.map((l) => Number(l.split(" ")[2] ?? 0)));
      assert.ok(most >= 2, `the groups ran side by side (at most ${most} at once)`);
    }));
});
