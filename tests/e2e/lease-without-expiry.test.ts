import assert from "node:assert/strict";
import { test } from "node:test";
import { cli } from "../support/cli.js";
import { eachBackend, withLocation } from "../support/e2e.js";

/**
 * A held lease whose expiry is empty (written by another system straight into the table):
 * listings show it without an expiry instead of failing, and check warns that it can never go
 * stale on its own.
 */
await eachBackend("a lease without expiry", (b) => {
  test("lock list --json shows it with expiresAt null; check warns about it", () =>
    withLocation(b, "no-expiry", async (url) => {
      const a = await cli([
        "lock",
        "acquire",
        "backup:vm",
        "--ttl",
        "1m",
        "--system",
        "backup",
        "--store",
        url,
      ]);
      assert.equal(a.code, 0, a.stderr);
      await b.rawSql(url, "UPDATE quiesce_leases SET expires_at = NULL WHERE scope = 'backup:vm'");
      const list = await cli(["lock", "list", "--json", "--store", url]);
      assert.equal(list.code, 0, list.stderr);
      const { leases } = JSON.parse(list.stdout) as {
        leases: { scope: string; expiresAt: string | null }[];
      };
      assert.deepEqual(
        leases.map((l) => [l.scope, l.expiresAt]),
        [["backup:vm", null]],
      );
      const text = await cli(["lock", "list", "--store", url]);
      assert.equal(text.code, 0, text.stderr);
      const check = await cli(["check", "--store", url]);
      assert.equal(check.code, 1, check.stdout);
      assert.match(check.stdout, /backup:vm has no expiry/);
    }));
});
