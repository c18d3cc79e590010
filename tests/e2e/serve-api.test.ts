import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { openLeases, type Provider } from "../../src/index.js";
import { Journal } from "../../src/journal/journal.js";
import { cli, startCli, waitFor } from "../support/cli.js";
import { eachBackend, events, showLease, withLocation } from "../support/e2e.js";
import { get, isOneSentence, openSse, post, startServe, TOKEN } from "../support/serve.js";
import { makeFleet, runArgs } from "./wave-helpers.js";
import { startAgent, waitRuntimeState, withRig } from "./journal-helpers.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const deadPid = () =>
  Number(spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim());
type Json = Record<string, unknown>;

/** Drops what moves with the clock between two reads. */
const still = (l: Json) =>
  Object.fromEntries(
    Object.entries(l).filter(([k]) => !["heartbeatAgeMs", "expiresInMs", "storeNow"].includes(k)),
  );

const lossy: Provider = {
  name: "mail",
  capabilities: { idempotencyKey: false, statusLookup: false },
  dispatch: () => Promise.reject(new Error("connection reset")),
};

/** A run in needs_review with one quarantined effect, written through the library. */
async function seedReview(url: string): Promise<void> {
  await using leases = await openLeases({ store: url });
  const lease = await leases.acquire("runtime:agent-1", { ttl: "10s" });
  const j = new Journal(leases.store, lease, { runtimeId: "agent-1", providers: [lossy] });
  const run = await j.createRun({ runId: "run-1" });
  await run.effect({ key: "invoice:1:email", provider: "mail" }).catch(() => undefined);
}

await eachBackend("serve: the JSON API", (b) => {
  test("reads give the CLI's --json shapes; missing scopes, runs, waves and runtimes are 404", () =>
    withLocation(b, "serve-read", async (url) => {
      const s = ["--store", url];
      await cli(["lock", "acquire", "host:a", "--ttl", "5m", "--note", "kernel", ...s]);
      await cli(["lock", "acquire", "team/db:1", "--ttl", "5m", ...s]);
      const srv = await startServe(url);
      try {
        const api = await get<{ leases: Json[] }>(srv.base, "/api/leases");
        assert.equal(api.status, 200);
        const listed = JSON.parse((await cli(["lock", "list", "--json", ...s])).stdout) as {
          leases: Json[];
        };
        assert.deepEqual(api.json.leases.map(still), listed.leases.map(still));

        const one = await get(srv.base, `/api/leases/${encodeURIComponent("team/db:1")}`);
        assert.equal(one.status, 200, one.text);
        const shown = JSON.parse(
          (await cli(["lock", "show", "team/db:1", "--json", ...s])).stdout,
        ) as Json;
        assert.deepEqual(still(one.json), still(shown));

        const free = await get(srv.base, "/api/leases/host:free");
        assert.equal(free.status, 404);
        assert.equal(free.json.error, "no lease is held on host:free");
        assert.equal(free.json.held, false);
        const bad = await get(srv.base, `/api/leases/${encodeURIComponent("bad scope")}`);
        assert.equal(bad.status, 400);
        assert.match(String(bad.json.error), /^scope: "bad scope" is not a valid scope name/);

        for (const [path, error] of [
          ["/api/runs/r-missing", "no run r-missing in the journal"],
          ["/api/waves/none", "no wave named none"],
          ["/api/runtimes/none", "no runtime named none"],
          ["/api/nothing-here", "no such endpoint: GET /api/nothing-here"],
        ]) {
          const r = await get(srv.base, path!);
          assert.equal(r.status, 404, path);
          assert.equal(r.json.error, error);
        }

        const ev = await get<{ events: { kind: string; scope: string }[] }>(
          srv.base,
          "/api/events?scope=host:a&since=1h",
        );
        assert.deepEqual(
          ev.json.events.map((e) => `${e.kind} ${e.scope}`),
          ["lease.acquired host:a"],
        );
        const badLimit = await get(srv.base, "/api/events?limit=0");
        assert.equal(badLimit.status, 400);
        assert.equal(badLimit.json.error, 'limit: "0" is not an integer of at least 1');

        // The same shape as `quiesce check --format json`.
        const check = await get<{ status: number; statusName: string; counts: { leases: number } }>(
          srv.base,
          "/api/check",
        );
        assert.deepEqual(
          [check.json.status, check.json.statusName, check.json.counts.leases],
          [0, "OK", 2],
        );
        const health = await get(srv.base, "/healthz");
        assert.deepEqual([health.status, health.json.ok, health.json.backend], [200, true, b.name]);
        for (const path of ["/api/runs", "/api/waves", "/api/runtimes"])
          assert.equal((await get(srv.base, path)).status, 200, path);
      } finally {
        assert.equal((await srv.stop()).code, 0);
      }
    }));

  test("operator actions: 401 without a token, 403 with a wrong one or on a read-only server; a break is recorded with the operator", () =>
    withLocation(b, "serve-auth", async (url) => {
      const s = ["--store", url];
      await cli([
        "lock",
        "acquire",
        "host:dead",
        "--ttl",
        "1s",
        "--owner-pid",
        String(deadPid()),
        ...s,
      ]);
      await cli(["lock", "acquire", "host:live", "--ttl", "5m", ...s]);
      await sleep(1200);
      const srv = await startServe(url);
      const ro = await startServe(url, { token: false });
      try {
        const body = { operator: "alice", reason: "host rebooted, checked the console" };
        const none = await post(srv.base, "/api/leases/host:dead/break", body, null);
        assert.equal(none.status, 401);
        assert.equal(none.headers.get("www-authenticate"), 'Bearer realm="quiesce"');
        assert.equal(
          none.json.error,
          "operator actions need an Authorization: Bearer <token> header",
        );
        const wrong = await post(srv.base, "/api/leases/host:dead/break", body, `${TOKEN}x`);
        assert.equal(wrong.status, 403);
        assert.equal(wrong.json.error, "the token is not this server's operator token");
        const readOnly = await post(ro.base, "/api/leases/host:dead/break", body);
        assert.equal(readOnly.status, 403);
        assert.match(String(readOnly.json.error), /^this server is read-only/);
        assert.equal((await showLease(url, "host:dead"))?.token, 1, "nothing was broken");

        const live = await post(srv.base, "/api/leases/host:live/break", body);
        assert.equal(live.status, 409);
        assert.match(String(live.json.error), /^not broken: /);
        assert.ok(await showLease(url, "host:live"), "a live lease stays");

        const ok = await post<{ outcome: string }>(srv.base, "/api/leases/host:dead/break", body);
        assert.equal(ok.status, 200, ok.text);
        assert.equal(ok.json.outcome, "broken");
        assert.equal(await showLease(url, "host:dead"), null);
        const broken = (await events(url, "host:dead")).find((e) => e.kind === "lease.broken")!;
        assert.equal(broken.detail.operator, "alice");
        assert.match(broken.message, /^broken by alice: host rebooted, checked the console/);
        const refused = (await events(url, "host:live")).find(
          (e) => e.kind === "lease.takeover_refused",
        )!;
        assert.equal(refused.detail.operator, "alice");

        const again = await post(srv.base, "/api/leases/host:dead/break", body);
        assert.equal(again.status, 404);
        assert.equal(again.json.error, "host:dead is free; nothing to break");
      } finally {
        await ro.stop();
        assert.equal((await srv.stop()).code, 0);
      }
    }));

  test("bad bodies are 400 (413 when too large) with one sentence, and change nothing", () =>
    withLocation(b, "serve-bodies", async (url) => {
      await cli(["lock", "acquire", "host:x", "--ttl", "5m", "--store", url]);
      const srv = await startServe(url);
      try {
        const path = "/api/leases/host:x/break";
        const cases: [unknown, number, string | RegExp][] = [
          ["{not json", 400, "the request body is not valid JSON"],
          [[1, 2], 400, "the request body must be a JSON object"],
          [{ operator: "alice" }, 400, "reason: say why (it goes into the record)"],
          [{ reason: "r" }, 400, "operator: say who you are (a name; it goes into the event)"],
          [{ operator: "alice", reason: "r", sudo: true }, 400, "unknown field(s): sudo"],
          [{ operator: "alice", reason: "r", force: "yes" }, 400, "force: true or false"],
          [{ operator: "alice", reason: "x".repeat(20_000) }, 413, /larger than 16384 bytes/],
        ];
        for (const [body, status, error] of cases) {
          const r = await post(srv.base, path, body);
          assert.equal(r.status, status, `${JSON.stringify(body).slice(0, 40)}: ${r.text}`);
          assert.ok(isOneSentence(r.json.error), r.text);
          if (typeof error === "string") assert.equal(r.json.error, error);
          else assert.match(String(r.json.error), error);
        }
        const resolve = await post(srv.base, "/api/runs/run-1/resolve", {
          operator: "a",
          effect: "k",
          as: "maybe",
          reason: "r",
        });
        assert.equal(resolve.status, 400);
        assert.equal(resolve.json.error, 'as: "observed" (it landed) or "not-sent"');
        assert.equal((await showLease(url, "host:x"))?.token, 1);
        assert.deepEqual(
          (await events(url)).map((e) => e.kind),
          ["lease.acquired"],
          "no event was written",
        );
      } finally {
        await srv.stop();
      }
    }));

  test("resolving a needs_review run through the API is recorded with the operator", () =>
    withLocation(b, "serve-resolve", async (url) => {
      await seedReview(url);
      const srv = await startServe(url);
      try {
        const queue = await get<{ runs: { runId: string }[] }>(
          srv.base,
          "/api/runs?state=needs_review",
        );
        assert.deepEqual(
          queue.json.runs.map((r) => r.runId),
          ["run-1"],
        );
        const body = { operator: "bob", as: "not-sent", reason: "no mail in the outbox" };
        const missing = await post(srv.base, "/api/runs/run-9/resolve", { ...body, effect: "x" });
        assert.equal(missing.status, 404);
        assert.equal(missing.json.error, "no run run-9 in the journal");
        const wrongKey = await post(srv.base, "/api/runs/run-1/resolve", {
          ...body,
          effect: "x:1",
        });
        assert.equal(wrongKey.status, 400);
        assert.match(
          String(wrongKey.json.error),
          /^run run-1 has no effect x:1 \(its effects: invoice:1:email\)/,
        );
        const ok = await post<{ run: { state: string }; effects: { state: string }[] }>(
          srv.base,
          "/api/runs/run-1/resolve",
          { ...body, effect: "invoice:1:email" },
        );
        assert.equal(ok.status, 200, ok.text);
        assert.deepEqual([ok.json.run.state, ok.json.effects[0]!.state], ["suspended", "PLANNED"]);
        const ev = (await events(url)).find((e) => e.kind === "journal.effect_resolved")!;
        assert.equal(ev.detail.operator, "bob");
        assert.match(
          ev.message,
          /^bob resolved effect invoice:1:email of run run-1 as not-sent: no mail/,
        );
      } finally {
        await srv.stop();
      }
    }));

  test("stopping a wave and draining a runtime through the API are recorded with the operator", () =>
    withLocation(b, "serve-stop", async (url) => {
      const fleet = makeFleet(3, { gated: ["h1"] });
      const srv = await startServe(url);
      try {
        assert.equal(
          (await cli(["wave", "create", "w", "--hosts", fleet.hostsFile, "--store", url])).code,
          0,
        );
        const agent = startCli(runArgs(url, "w", fleet));
        await waitFor("h1 to start", () => fleet.lines().includes("start h1"));
        const stop = await post<{ status: string }>(srv.base, "/api/waves/w/stop", {
          operator: "carol",
        });
        assert.equal(stop.status, 200, stop.text);
        assert.equal(stop.json.status, "requested");
        // The agent takes the request within a second; only then may h1 finish.
        await waitFor("the wave's agent to drain", async () => {
          const rt = await get<{ state: string }>(
            srv.base,
            `/api/runtimes/${encodeURIComponent("wave:w")}`,
          );
          return rt.json.state === "DRAINING";
        });
        fleet.open("h1");
        await agent.done;
        const w = await get<{ wave: { state: string } }>(srv.base, "/api/waves/w");
        assert.equal(w.json.wave.state, "stopped");
        const req = (await events(url)).find((e) => e.kind === "maintenance.requested")!;
        assert.equal(req.detail.by, "carol");
        const missing = await post(srv.base, "/api/waves/nope/stop", { operator: "carol" });
        assert.equal(missing.status, 404);

        await withRig(url, "full", async ({ provider, store, agents }) => {
          const a = startAgent(url, "agent-7", provider);
          agents.push(a);
          await a.line("started", 20_000);
          const body = { operator: "dave", runtime: "agent-7", id: "mw-7" };
          const noRuntime = await post(srv.base, "/api/maintenance", {
            ...body,
            runtime: "agent-8",
          });
          assert.equal(noRuntime.status, 404);
          assert.equal(noRuntime.json.error, "no runtime named agent-8");
          const r = await post<{ status: string }>(srv.base, "/api/maintenance", body);
          assert.equal(r.status, 200, r.text);
          assert.equal(r.json.status, "requested");
          await waitRuntimeState(store, "agent-7", "STOPPED");
          const ev = (await events(url)).filter((e) => e.kind === "maintenance.requested");
          assert.equal(ev.at(-1)!.detail.by, "dave");
        });
      } finally {
        fleet.cleanup();
        await srv.stop();
      }
    }));

  test("the event stream sends each event as it is written; a reconnect with Last-Event-ID gets exactly what it missed", () =>
    withLocation(b, "serve-sse", async (url) => {
      const s = ["--store", url];
      const srv = await startServe(url);
      try {
        const first = openSse(`${srv.base}/api/events/stream`);
        await sleep(300); // connected: the stream starts at the tail
        await cli(["lock", "acquire", "a", "--ttl", "5m", ...s]);
        const seen = await first.waitFor("a's acquisition", (m) => m.data.includes('"scope":"a"'));
        first.close();
        const lastId = seen.id!;
        assert.equal((JSON.parse(seen.data) as { kind: string }).kind, "lease.acquired");

        await cli(["lock", "acquire", "b", "--ttl", "5m", ...s]);
        await cli(["lock", "acquire", "c", "--ttl", "5m", ...s]);
        const again = openSse(`${srv.base}/api/events/stream`, { "last-event-id": lastId });
        await again.waitFor("c", (m) => m.data.includes('"scope":"c"'));
        await cli(["lock", "acquire", "d", "--ttl", "5m", ...s]);
        await again.waitFor("d, live", (m) => m.data.includes('"scope":"d"'));
        await sleep(700); // a tick or so: nothing may come twice
        again.close();
        const got = again.messages.map((m) => (JSON.parse(m.data) as { scope: string }).scope);
        assert.deepEqual(got, ["b", "c", "d"]);
        const ids = again.messages.map((m) => Number(m.id));
        assert.ok(ids.every((id, i) => id > Number(lastId) && (i === 0 || id > ids[i - 1]!)));
      } finally {
        await srv.stop();
      }
    }));
});
