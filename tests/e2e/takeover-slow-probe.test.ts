import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { cli } from "../support/cli.js";
import { eachBackend, showLease, withLocation } from "../support/e2e.js";
import { tempDir } from "../support/paths.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A takeover whose probe takes longer than the TTL (an ssh probe waiting out its connect
 * timeout): the new lease's local deadline counts from the compare-and-swap, not from before the
 * probe. Counted from before it, the lease was lost the moment it was taken. Both ways to a
 * takeover: at once, and from the wait queue after a first refusal.
 */
await eachBackend("takeover with a slow probe", (b) => {
  const cases = [
    { name: "at once", wait: "0s", probe: () => "sleep 2; exit 1" },
    {
      name: "from the wait queue, after a first 'unknown'",
      wait: "30s",
      // The first answer is unknown (the waiter queues up), the next one dead.
      probe: (flag: string) => `sleep 2; [ -e ${flag} ] && exit 1; touch ${flag}; exit 2`,
    },
  ];
  for (const c of cases)
    test(`a probe slower than the TTL, ${c.name}: the lease taken over is held for its whole TTL, and renewed`, (t) =>
      withLocation(b, "slow-probe", async (url) => {
        const tmp = tempDir();
        t.after(tmp.cleanup);
        const stale = await cli([
          ...["lock", "acquire", "s", "--ttl", "1s", "--owner-pid", "none", "--store", url],
        ]);
        assert.equal(stale.code, 0, stale.stderr);
        // Its owner on another host: only the command probe can settle it.
        await b.rawSql(url, "UPDATE quiesce_leases SET host = 'elsewhere' WHERE scope = 's'");
        await sleep(1300);
        const r = await cli([
          ...["run", "--lease", "s", "--ttl", "1s", "--wait", c.wait, "--store", url],
          ...["--probe", c.probe(join(tmp.dir, "asked")), "--remote-grace", "never"],
          ...["--", "sh", "-c", "sleep 2; echo done"],
        ]);
        assert.equal(r.code, 0, `held through the command (2 s, twice the TTL): ${r.stderr}`);
        assert.equal(r.stdout, "done\n");
        if (c.wait !== "0s") assert.match(r.stderr, /takeover refused/, "it queued up first");
        assert.equal(await showLease(url, "s"), null, "and released");
      }));
});
