import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import { cli, waitFor } from "../support/cli.js";
import { eachBackend, showLease, withLocation } from "../support/e2e.js";
import { tempDir } from "../support/paths.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const deadPid = () =>
  Number(spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim());

async function listen(
  handler: (req: IncomingMessage, body: string, res: ServerResponse) => void,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => handler(req, body, res));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

async function staleLease(url: string, scope: string, system = "quiesce"): Promise<void> {
  const r = await cli([
    "lock",
    "acquire",
    scope,
    "--ttl",
    "1s",
    "--system",
    system,
    "--owner-pid",
    String(deadPid()),
    "--store",
    url,
  ]);
  assert.equal(r.code, 0, r.stderr);
  await sleep(1200);
}

await eachBackend("takeover alerts", (b) => {
  test("a takeover is delivered to a webhook on a local HTTP server", async (t) => {
    const got: {
      path: string | undefined;
      type: string | undefined;
      body: Record<string, unknown>;
    }[] = [];
    const { server, url: hook } = await listen((req, body, res) => {
      got.push({
        path: req.url,
        type: req.headers["content-type"],
        body: JSON.parse(body) as Record<string, unknown>,
      });
      res.writeHead(204).end();
    });
    t.after(() => server.close());
    await withLocation(b, "webhook", async (url) => {
      await staleLease(url, "host:web-1");
      const r = await cli([
        "run",
        "--store",
        url,
        "--lease",
        "host:web-1",
        "--alert-webhook",
        hook,
        "--",
        "true",
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        /ALERT \[warning\] lease\.taken_over host:web-1/,
        "the log sink always speaks",
      );
      assert.equal(got.length, 1);
      assert.equal(got[0]!.type, "application/json");
      const a = got[0]!.body;
      assert.equal(a.kind, "lease.taken_over");
      assert.equal(a.scope, "host:web-1");
      assert.equal(a.token, 2);
      assert.match(String(a.summary), /took over token 1 from run r-.* owner gone/);
    });
  });

  test("a dead webhook endpoint does not delay the takeover", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const { server, url: hook } = await listen(() => {
      /* never answers */
    });
    t.after(() => {
      server.closeAllConnections();
      server.close();
    });
    const started = join(tmp.dir, "started");
    await withLocation(b, "deadhook", async (url) => {
      await staleLease(url, "s");
      const invoked = Date.now();
      const r = await cli([
        "run",
        "--store",
        url,
        "--lease",
        "s",
        "--alert-webhook",
        hook,
        "--",
        "sh",
        "-c",
        `date +%s%3N > ${started}`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const startedAt = Number(readFileSync(started, "utf8"));
      // The command ran under the taken-over lease long before the webhook's 5 s timeout.
      assert.ok(
        startedAt - invoked < 4000,
        `the command started ${startedAt - invoked} ms after invocation`,
      );
      assert.equal(await showLease(url, "s"), null);
    });
  });

  test("a refused takeover (owner alive) is an alert through --alert-cmd", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const out = join(tmp.dir, "alert.json");
    await withLocation(b, "refusal-alert", async (url) => {
      // This test process is the "owner": alive, but the lease is not renewed.
      assert.equal(
        (
          await cli([
            "lock",
            "acquire",
            "s",
            "--ttl",
            "1s",
            "--owner-pid",
            String(process.pid),
            "--store",
            url,
          ])
        ).code,
        0,
      );
      await sleep(1200);
      const r = await cli(["lock", "takeover", "s", "--alert-cmd", `cat > ${out}`, "--store", url]);
      assert.equal(r.code, 75);
      await waitFor(
        "the alert command",
        () => existsSync(out) && readFileSync(out, "utf8").length > 0,
      );
      const a = JSON.parse(readFileSync(out, "utf8")) as {
        kind: string;
        severity: string;
        summary: string;
      };
      assert.equal(a.kind, "lease.takeover_refused");
      assert.equal(a.severity, "critical");
      assert.match(a.summary, new RegExp(`holder pid ${process.pid} on .* is still running`));
    });
  });
});
