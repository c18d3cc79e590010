import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { postgresBackend } from "../support/backends.js";
import { startCli, waitFor } from "../support/cli.js";
import { events, showLease, withLocation } from "../support/e2e.js";
import { tempDir } from "../support/paths.js";
import { pgExec } from "../support/pg.js";
import { startTcpProxy } from "../support/tcp-proxy.js";

const skip = await postgresBackend.skip();

/**
 * PostgreSQL going away under a holder. The rule: the holder either reconnects and keeps
 * renewing, or self-fences (stops its command) before the lease can expire on the server;
 * never both holding and not renewing.
 */
describe("run on PostgreSQL when the store goes away", { skip }, () => {
  test("connections terminated by the server (pg_terminate_backend): the holder reconnects and keeps the lease", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ready = join(tmp.dir, "ready");
    await withLocation(postgresBackend, "terminate", async (url) => {
      const p = startCli([
        "run",
        "--store",
        url,
        "--lease",
        "s",
        "--ttl",
        "3s",
        "--heartbeat",
        "500ms",
        "--",
        "sh",
        "-c",
        `touch ${ready}; sleep 5`,
      ]);
      await waitFor("the command to start", () => existsSync(ready));
      const app = `quiesce %:${p.pid}`;
      // Read on the store's clock with one query, not a `lock show` process per round: on a slow
      // machine those took so long that the 5 s command saw only two rounds of terminations.
      const schema = new URL(url).searchParams.get("schema")!;
      let killed = 0;
      let sawExpired = false;
      while (p.child.exitCode === null) {
        const rows = await pgExec(
          "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name LIKE $1",
          [app],
        );
        killed += rows.length;
        const [l] = await pgExec(
          `SELECT expires_at <= clock_timestamp() AS expired FROM ${schema}.quiesce_leases
            WHERE scope = 's' AND held`,
        );
        if (l?.expired === true) sawExpired = true;
        await new Promise((r) => setTimeout(r, 400));
      }
      const r = await p.done;
      assert.ok(killed >= 3, `the holder's connections were terminated (${killed} times)`);
      assert.equal(r.code, 0, `the command finished under the lease; stderr: ${r.stderr}`);
      assert.equal(sawExpired, false, "the lease never expired while its holder ran");
      const ev = await events(url, "s");
      assert.equal(ev.filter((e) => e.kind === "lease.lost").length, 0);
      assert.ok(
        ev.some((e) => e.kind === "lease.released"),
        "released at the end",
      );
    });
  });

  test("the store unreachable for longer than the TTL: the holder stops its command before the lease expires (I4)", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ready = join(tmp.dir, "ready");
    const termAt = join(tmp.dir, "term-at");
    const proxy = await startTcpProxy(5432);
    t.after(() => proxy.close());
    await withLocation(postgresBackend, "cut", async (directUrl) => {
      const viaProxy = new URL(directUrl);
      viaProxy.port = String(proxy.port);
      const cmd = `trap 'date +%s%3N > ${termAt}; exit 0' TERM; touch ${ready}; while :; do sleep 0.02; done`;
      const p = startCli([
        "run",
        "--store",
        viaProxy.toString(),
        "--lease",
        "s",
        "--ttl",
        "2s",
        "--",
        "sh",
        "-c",
        cmd,
      ]);
      await waitFor("the command to start", () => existsSync(ready));
      const cutAt = Date.now();
      proxy.cut();
      const r = await p.done;
      assert.equal(r.code, 76, `lease lost while the command ran; stderr: ${r.stderr}`);
      assert.ok(existsSync(termAt), "the command was sent SIGTERM");
      const terminatedAt = Number(readFileSync(termAt, "utf8"));
      // The lease row was never released (the store was unreachable): its expiry is the
      // server's last word on how long the holder owned it.
      const lease = await showLease(directUrl, "s");
      assert.ok(lease, "the lease is still recorded");
      const expiresAt = Date.parse(lease.expiresAt);
      assert.ok(
        terminatedAt < expiresAt,
        `the command was stopped ${expiresAt - terminatedAt} ms before the server-side expiry (cut at ${cutAt})`,
      );
      assert.match(r.stderr, /heartbeat failed/);
    });
  });
});
