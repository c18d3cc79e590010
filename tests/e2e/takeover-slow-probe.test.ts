import assert from "node:assert/strict";
import { test } from "node:test";
import { cli } from "../support/cli.js";
import { eachBackend, showLease, withLocation } from "../support/e2e.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A takeover whose probe takes longer than the TTL (an ssh probe waiting out its connect
 * timeout): the new lease's local deadline counts from the compare-and-swap, not from before the
 * probe. Counted from before it, the lease was lost the moment it was taken.
 */
await eachBackend("takeover with a slow probe", (b) => {
  test("a probe slower than the TTL: the lease taken over is held for its whole TTL, and renewed", () =>
    withLocation(b, "slow-probe", async (url) => {
      const stale = await cli([
        "lock",
        "acquire",
        "s",
        "--ttl",
        "1s",
        "--owner-pid",
        "none",
        "--store",
        url,
      ]);
      assert.equal(stale.code, 0, stale.stderr);
      // Its owner on another host: only the command probe can settle it.
      await b.rawSql(url, "UPDATE quiesce_leases SET host = 'elsewhere' WHERE scope = 's'");
      await sleep(1300);
      const r = await cli([
        ...["run", "--lease", "s", "--ttl", "1s", "--store", url],
        ...["--probe", "sleep 2; exit 1", "--remote-grace", "never"],
        ...["--", "sh", "-c", "sleep 2; echo done"],
      ]);
      assert.equal(r.code, 0, `held through the command (2 s, twice the TTL): ${r.stderr}`);
      assert.equal(r.stdout, "done\n");
      assert.equal(await showLease(url, "s"), null, "and released");
    }));
});
