import assert from "node:assert/strict";
import { test } from "node:test";
import { cli } from "../support/cli.js";
import { eachBackend, events, showLease, withLocation } from "../support/e2e.js";

/** `lock acquire/renew/release` for scripts and other systems that hold a lease across commands. */
await eachBackend("lock: holding a lease across commands", (b) => {
  test("acquire prints the token; list, show, renew and release work on it; a wrong token is refused", () =>
    withLocation(b, "lockcmds", async (url) => {
      const s = ["--store", url];
      const a = await cli([
        "lock",
        "acquire",
        "backup:nightly",
        "--ttl",
        "1m",
        "--system",
        "backup",
        "--note",
        "db dump",
        ...s,
      ]);
      assert.equal(a.code, 0, a.stderr);
      assert.equal(a.stdout, "1\n", "only the token on stdout, for $(...)");

      const again = await cli(["lock", "acquire", "backup:nightly", "--ttl", "1m", ...s]);
      assert.equal(again.code, 75);
      assert.match(again.stderr, /backup:nightly is held by run r-\S+ of system "backup"/);

      const list = await cli(["lock", "list", "--json", ...s]);
      const listed = JSON.parse(list.stdout) as {
        leases: { scope: string; owner: { system: string; note: string } }[];
      };
      assert.deepEqual(
        listed.leases.map((l) => [l.scope, l.owner.system, l.owner.note]),
        [["backup:nightly", "backup", "db dump"]],
      );
      const table = await cli(["lock", "list", ...s]);
      assert.match(table.stdout, /^SCOPE\s+TOKEN\s+SYSTEM\s+OWNER/);
      assert.match(table.stdout, /backup:nightly\s+1\s+backup\s+/);
      const show = await cli(["lock", "show", "backup:nightly", ...s]);
      assert.match(show.stdout, /state\s+live/);
      assert.match(show.stdout, /note\s+db dump/);

      const before = await showLease(url, "backup:nightly");
      await new Promise((r) => setTimeout(r, 50));
      const renew = await cli([
        "lock",
        "renew",
        "backup:nightly",
        "--token",
        "1",
        "--ttl",
        "2m",
        ...s,
      ]);
      assert.equal(renew.code, 0, renew.stderr);
      const after = await showLease(url, "backup:nightly");
      assert.ok(
        Date.parse(after!.expiresAt) - Date.parse(before!.expiresAt) > 55_000,
        "renewed for the new TTL",
      );

      const wrongRenew = await cli(["lock", "renew", "backup:nightly", "--token", "2", ...s]);
      assert.equal(wrongRenew.code, 76);
      const wrong = await cli(["lock", "release", "backup:nightly", "--token", "2", ...s]);
      assert.equal(wrong.code, 76);
      assert.match(wrong.stderr, /token 2 was superseded|token 2 .*token 1/);
      assert.ok(await showLease(url, "backup:nightly"), "a wrong token releases nothing");

      const rel = await cli(["lock", "release", "backup:nightly", "--token", "1", ...s]);
      assert.equal(rel.code, 0, rel.stderr);
      assert.equal(await showLease(url, "backup:nightly"), null);
      const twice = await cli(["lock", "release", "backup:nightly", "--token", "1", ...s]);
      assert.equal(twice.code, 76, "releasing twice is refused");
      assert.match(twice.stderr, /no longer held/);

      const next = await cli(["lock", "acquire", "backup:nightly", "--ttl", "1m", ...s]);
      assert.equal(next.stdout, "2\n", "the next token is 2, never 1 again");

      const kinds = (await events(url, "backup:nightly")).map((e) => e.kind);
      assert.deepEqual(kinds, [
        "lease.acquired",
        "lease.fenced_write_rejected", // the renewal with token 2
        "lease.release_rejected",
        "lease.released",
        "lease.release_rejected",
        "lease.acquired",
      ]);
    }));

  test("state set is fenced by the token; state get reads it back", () =>
    withLocation(b, "state", async (url) => {
      const s = ["--store", url];
      assert.equal((await cli(["lock", "acquire", "job", "--ttl", "1m", ...s])).stdout, "1\n");
      assert.equal((await cli(["state", "set", "job", "step", "3", "--token", "1", ...s])).code, 0);
      const stale = await cli(["state", "set", "job", "step", "9", "--token", "7", ...s]);
      assert.equal(stale.code, 76);
      assert.equal((await cli(["state", "get", "job", "step", ...s])).stdout, "3\n");
      const refused = (await events(url, "job")).filter(
        (e) => e.kind === "lease.fenced_write_rejected",
      );
      assert.deepEqual(
        refused.map((e) => [e.token, e.detail.reason, e.message]),
        [
          [
            7,
            "token_mismatch",
            "state write (step) with token 7 refused: token mismatch (token 1 is current)",
          ],
        ],
      );
      const json = JSON.parse((await cli(["state", "get", "job", "--json", ...s])).stdout) as {
        key: string;
        token: number;
      }[];
      assert.deepEqual(
        json.map((e) => [e.key, e.token]),
        [["step", 1]],
      );
    }));

  test("lock acquire --wait takes its place in line and gets the lease when released", () =>
    withLocation(b, "acqwait", async (url) => {
      const s = ["--store", url];
      assert.equal((await cli(["lock", "acquire", "w", "--ttl", "1m", ...s])).stdout, "1\n");
      const waiting = cli(["lock", "acquire", "w", "--ttl", "1m", "--wait", "20s", ...s]);
      await new Promise((r) => setTimeout(r, 700));
      assert.equal((await cli(["lock", "release", "w", "--token", "1", ...s])).code, 0);
      const r = await waiting;
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, "2\n");
      assert.match(r.stderr, /waiting for w/);
    }));

  test("store info and events --since", () =>
    withLocation(b, "info", async (url) => {
      const missing = await cli(["store", "info", "--store", url]);
      assert.equal(missing.code, 1, "info only reads: a new location is not created");
      assert.equal((await cli(["store", "migrate", "--store", url])).code, 0);
      const info = await cli(["store", "info", "--json", "--store", url]);
      assert.equal(info.code, 0, info.stderr);
      const i = JSON.parse(info.stdout) as {
        backend: string;
        schemaVersion: number;
        latestSchemaVersion: number;
      };
      assert.equal(i.backend, b.name);
      assert.equal(i.schemaVersion, i.latestSchemaVersion);
      await cli(["lock", "acquire", "e", "--ttl", "1m", "--store", url]);
      assert.equal((await events(url)).length, 1);
      const none = await cli(["events", "--since", "1ms", "--store", url]);
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(none.code, 0);
    }));
});
