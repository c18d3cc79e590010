import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { startCli, waitFor } from "../support/cli.js";
import { events, showLease, withLocation } from "../support/e2e.js";
import { postgresBackend } from "../support/backends.js";
import { pgExec, pgSkip } from "../support/pg.js";
import { makePrivatePg, privatePgUnavailable } from "../support/private-pg.js";
import { tempDir } from "../support/paths.js";
import { startTcpProxy } from "../support/tcp-proxy.js";

/**
 * Waiters and holders ride out the store's faults (issue: "a waiter gives up when PostgreSQL
 * drops its connection", "losses missing from the event log").
 */
/** Creates the store first: read-only commands (lock show) never do. */
async function made(url: string): Promise<void> {
  const r = await startCli(["store", "migrate", "--store", url]).done;
  assert.equal(r.code, 0, r.stderr);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const skip = await pgSkip();
const noPrivate = privatePgUnavailable();
if (noPrivate !== null && process.env.CI === "true")
  throw new Error(`${noPrivate} (CI=true: the restart test may not skip)`);

describe("PostgreSQL faults: waiters and holders", { skip }, () => {
  test("a waiter whose connection is terminated (pg_terminate_backend) keeps waiting and gets the lease", (t) =>
    withLocation(postgresBackend, "terminated-waiter", async (url) => {
      await made(url);
      const holder = startCli([
        "run",
        "--store",
        url,
        "--lease",
        "s",
        "--ttl",
        "3s",
        "--",
        "sleep",
        "3",
      ]);
      await waitFor("the holder", async () => (await showLease(url, "s")) !== null);
      const waiter = startCli([
        "run",
        "--store",
        url,
        "--lease",
        "s",
        "--wait",
        "30s",
        "--",
        "true",
      ]);
      t.after(() => waiter.child.kill("SIGKILL"));
      await waitFor("the waiter to wait", () => /waiting for s/.test(waiter.stderr()));
      // Kill every session of the waiter, twice, while it waits (each time once it has one
      // again: it reconnects on its own).
      const sessions = () =>
        pgExec("SELECT pid FROM pg_stat_activity WHERE application_name LIKE $1", [
          `quiesce %:${waiter.pid}`,
        ]);
      for (let i = 0; i < 2; i++) {
        await waitFor("a session of the waiter", async () => (await sessions()).length > 0);
        const killed = await pgExec(
          "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name LIKE $1",
          [`quiesce %:${waiter.pid}`],
        );
        assert.ok(killed.length > 0, "the waiter had a session to terminate");
        await sleep(400);
      }
      assert.equal((await holder.done).code, 0);
      const r = await waiter.done;
      assert.equal(r.code, 0, `the waiter got the lease: ${r.stderr}`);
      const acquired = (await events(url, "s")).filter((e) => e.kind === "lease.acquired");
      assert.equal(acquired.length, 2, "holder, then waiter");
    }));

  test(
    "waiters ride out a PostgreSQL restart (a private cluster) and get the lease",
    { skip: noPrivate ?? false, timeout: 120_000 },
    async (t) => {
      const pg = await makePrivatePg();
      t.after(() => pg.destroy());
      const url = `${pg.url}?schema=restart`;
      await made(url);
      const holder = startCli([
        "run",
        "--store",
        url,
        "--lease",
        "s",
        "--ttl",
        "3s",
        "--",
        "sleep",
        "2",
      ]);
      await waitFor("the holder", async () => (await showLease(url, "s")) !== null);
      const waiters = [1, 2].map(() =>
        startCli(["run", "--store", url, "--lease", "s", "--wait", "60s", "--", "true"]),
      );
      t.after(() => waiters.forEach((w) => w.child.kill("SIGKILL")));
      await waitFor("both waiters to wait", () =>
        waiters.every((w) => /waiting for s/.test(w.stderr())),
      );
      pg.stop("fast");
      await sleep(2500);
      pg.start();
      await holder.done; // it may lose its lease during the restart; either way it ends
      const results = await Promise.all(waiters.map((w) => w.done));
      for (const r of results) assert.equal(r.code, 0, `a waiter got the lease: ${r.stderr}`);
      assert.ok(
        results.some((r) => /unreachable|retrying/.test(r.stderr)),
        "a waiter saw the store go away and waited",
      );
    },
  );

  test("a holder that lost its lease while the store was away records lease.lost once the store is back", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const outbox = join(tmp.dir, "outbox");
    const proxy = await startTcpProxy(5432);
    t.after(() => proxy.close());
    await withLocation(postgresBackend, "late-loss", async (directUrl) => {
      const viaProxy = new URL(directUrl);
      viaProxy.port = String(proxy.port);
      const env = { QUIESCE_OUTBOX_DIR: outbox };
      await made(directUrl);
      const p = startCli(
        [
          "run",
          "--store",
          viaProxy.toString(),
          "--lease",
          "s",
          "--ttl",
          "2s",
          "--grace",
          "1s",
          "--",
          "sleep",
          "30",
        ],
        env,
      );
      await waitFor("the lease", async () => (await showLease(directUrl, "s")) !== null);
      proxy.cut();
      const r = await p.done;
      assert.equal(r.code, 76, r.stderr);
      assert.equal(
        (await events(directUrl, "s")).filter((e) => e.kind === "lease.lost").length,
        0,
        "the store was away: nothing could be written",
      );
      assert.ok(
        existsSync(outbox) && readdirSync(outbox).length === 1,
        "the loss waits in the spool",
      );
      await proxy.restore();
      // The next quiesce process on this host that opens the store writes it first.
      const next = await startCli(
        ["lock", "acquire", "other", "--ttl", "5s", "--store", viaProxy.toString()],
        env,
      ).done;
      assert.equal(next.code, 0, next.stderr);
      const lost = (await events(directUrl, "s")).filter((e) => e.kind === "lease.lost");
      assert.equal(lost.length, 1, "every loss ends up in the log");
      assert.equal(lost[0]!.token, 1);
      assert.ok(typeof lost[0]!.detail.at === "string", "with the holder's own time of it");
      assert.equal(readdirSync(outbox).length, 0, "and the spool is empty");
    });
  });
});
