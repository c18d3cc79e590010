import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { postgresBackend, sqliteBackend } from "../support/backends.js";
import { cli, waitFor } from "../support/cli.js";
import { withLocation } from "../support/e2e.js";
import { tempDir } from "../support/paths.js";
import { get, openSse, startServe } from "../support/serve.js";
import { startTcpProxy } from "../support/tcp-proxy.js";

const PASSWORD = "pw-Secret-4711";

describe("serve: start-up refusals and shutdown", () => {
  test("listening beyond loopback without a token, or with a token others can read, is refused: exit 2, one sentence", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const store = join(tmp.dir, "q.db");
    const open = await cli(["serve", "--listen", "0.0.0.0:0", "--store", store]);
    assert.equal(open.code, 2);
    assert.equal(
      open.stderr,
      "quiesce: --listen 0.0.0.0: listening beyond loopback needs --token-file (operators' actions would be open to the network)\n",
    );
    const file = join(tmp.dir, "token");
    writeFileSync(file, "a-token-of-enough-length\n", { mode: 0o640 });
    const loose = await cli([
      "serve",
      "--listen",
      "127.0.0.1:0",
      "--token-file",
      file,
      "--store",
      store,
    ]);
    assert.equal(loose.code, 2);
    assert.equal(
      loose.stderr,
      `quiesce: --token-file: ${file} is readable by its group or others (mode 640); chmod 600 it\n`,
    );
    const bad = await cli(["serve", "--listen", "nowhere", "--store", store]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^quiesce: --listen: "nowhere" is not HOST:PORT/);
  });

  test("SIGTERM ends the open streams and exits 0", () =>
    withLocation(sqliteBackend, "serve-term", async (url) => {
      const srv = await startServe(url);
      const events = openSse(`${srv.base}/api/events/stream`);
      const page = openSse(`${srv.base}/dashboard/stream`);
      await page.waitFor("the first snapshot", (m) => m.event === "snapshot");
      const r = await srv.stop();
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /quiesce: stopped\n$/);
      await events.done;
      await page.done;
      assert.ok(events.ended() && page.ended(), "both streams were ended by the server");
    }));
});

describe("serve: the store going away", { skip: await postgresBackend.skip() }, () => {
  test("/healthz is 503 and the dashboard says so while PostgreSQL is unreachable; both recover by themselves; no password is ever shown", async (t) => {
    const proxy = await startTcpProxy(5432);
    t.after(() => proxy.close());
    await withLocation(postgresBackend, "serve-outage", async (direct) => {
      const u = new URL(direct);
      u.port = String(proxy.port);
      u.password = PASSWORD;
      await cli(["lock", "acquire", "host:a", "--ttl", "5m", "--store", u.toString()]);
      const srv = await startServe(u.toString());
      t.after(() => srv.stop());
      const page = openSse(`${srv.base}/dashboard/stream`);
      t.after(() => page.close());
      const bodies: string[] = [];
      const look = async (path: string) => {
        const r = await get(srv.base, path);
        bodies.push(r.text);
        return r;
      };
      for (const path of [
        "/",
        "/api/leases",
        "/api/check",
        "/healthz",
        "/metrics",
        "/api/runtimes",
      ])
        assert.equal((await look(path)).status, 200, path);
      await page.waitFor("a snapshot", (m) => m.event === "snapshot");

      proxy.cut();
      const down = await waitFor("/healthz to say 503", async () => {
        const r = await look("/healthz");
        return r.status === 503 ? r : null;
      });
      assert.equal(down.json.ok, false);
      await page.waitFor(
        "the page to be told",
        (m) => m.event === "health" && m.data.includes('"ok":false'),
      );
      const leases = await look("/api/leases");
      assert.equal(leases.status, 503);
      assert.match(String(leases.json.error), /PostgreSQL/);
      const dash = await look("/");
      assert.equal(dash.status, 503);
      assert.match(dash.text, /The store is unreachable/);
      assert.match((await look("/metrics")).text, /^quiesce_store_up 0$/m);

      const healthBefore = page.messages.length;
      await proxy.restore();
      await waitFor(
        "/healthz to recover",
        async () => (await look("/healthz")).status === 200,
        30_000,
      );
      await page.waitFor(
        "the page to be told it recovered",
        (m) =>
          m.event === "health" &&
          m.data.includes('"ok":true') &&
          page.messages.indexOf(m) >= healthBefore,
        30_000,
      );
      assert.equal((await look("/api/leases")).status, 200);
      assert.match((await look("/metrics")).text, /^quiesce_store_up 1$/m);
      bodies.push(...page.messages.map((m) => m.data));
      for (const b of bodies)
        assert.ok(!b.includes(PASSWORD), `a response showed the password: ${b.slice(0, 200)}`);
    });
  });
});
