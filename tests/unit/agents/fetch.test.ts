import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, test } from "node:test";
import { fetchProvider, journaledFetch, withRun } from "../../../src/agents/fetch.js";
import { isQuiesceError } from "../../../src/domain/errors.js";
import { Journal } from "../../../src/journal/journal.js";
import type { Lease } from "../../../src/lease/lease.js";
import { tempStore } from "../journal/fixtures.js";

/** A provider on 127.0.0.1 that records each request's Idempotency-Key; /reset drops the connection. */
async function server() {
  const seen: { path: string; key: string | undefined; body: string }[] = [];
  const s = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push({ path: req.url ?? "", key: req.headers["idempotency-key"] as string, body });
      if (req.url === "/reset") return req.socket.destroy();
      res.writeHead(201, {
        "content-type": "application/json",
        "request-id": `pay-${seen.length}`,
      });
      res.end(JSON.stringify({ paid: true }));
    });
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return { seen, url, close: () => new Promise<void>((r) => s.close(() => r())) };
}

describe("quiesce/fetch: journaledFetch", () => {
  let env: ReturnType<typeof tempStore>;
  let lease: Lease;
  let srv: Awaited<ReturnType<typeof server>>;
  beforeEach(async () => {
    env = tempStore();
    lease = await env.leases.acquire("runtime:rt", { ttl: "10s" });
    srv = await server();
  });
  afterEach(async () => {
    await srv.close();
    await env.cleanup();
  });

  test("sends the Idempotency-Key header, records the provider's request id, and a replay returns the recorded Response without sending", async () => {
    const payments = fetchProvider({ name: "payments" });
    const j = new Journal(env.store, lease, { runtimeId: "rt", providers: [payments] });
    const run = await j.createRun({ runId: "f1" });
    const call = () =>
      withRun(run, () =>
        journaledFetch(
          "invoice:8472:pay",
          { url: `${srv.url}/pay`, json: { amount: 5 } },
          { provider: payments },
        ),
      );
    const first = await call();
    const again = await call();
    assert.equal(srv.seen.length, 1, "sent once");
    assert.deepEqual(srv.seen[0], {
      path: "/pay",
      key: '"invoice:8472:pay"',
      body: '{"amount":5}',
    });
    for (const r of [first, again]) {
      assert.equal(r.status, 201);
      assert.equal(r.headers.get("request-id"), "pay-1");
      assert.deepEqual(await r.json(), { paid: true });
    }
    const e = (await env.store.journal.getRun("f1"))!.effects[0]!;
    assert.deepEqual([e.provider, e.state, e.requestId], ["payments", "OBSERVED", "pay-1"]);
    assert.deepEqual(JSON.parse(e.context!), { method: "POST", url: `${srv.url}/pay` });
  });

  test("a reset connection is 'unknown', never 'not sent': without a lookup the effect goes to review and is not sent again", async () => {
    const j = new Journal(env.store, lease, { runtimeId: "rt" });
    const run = await j.createRun({ runId: "f2" });
    await assert.rejects(
      withRun(run, () =>
        journaledFetch("refund:1", { url: `${srv.url}/reset`, method: "POST", body: "x" }),
      ),
      (e) => isQuiesceError(e, "NEEDS_REVIEW"),
    );
    assert.equal(srv.seen.length, 1);
    const snap = (await env.store.journal.getRun("f2"))!;
    assert.equal(snap.effects[0]!.state, "NEEDS_REVIEW");
    assert.equal(snap.run.state, "needs_review");
  });

  test("bad input: one sentence, nothing journaled", async () => {
    const j = new Journal(env.store, lease, { runtimeId: "rt" });
    const run = await j.createRun({ runId: "f3" });
    for (const [go, want] of [
      [
        () => journaledFetch(7 as unknown as string, srv.url, { run }),
        /journaledFetch: the idempotency key must be a string, not number/,
      ],
      [() => journaledFetch("k:1", "/relative", { run }), /"\/relative" is not an absolute URL/],
      [() => journaledFetch("k:1", srv.url), /no run to journal it in/],
    ] as const)
      await assert.rejects(go(), want);
    await run.complete();
    await assert.rejects(
      journaledFetch("k:1", srv.url, { run }),
      /run f3 is completed, not active/,
    );
    assert.equal((await env.store.journal.getRun("f3"))!.effects.length, 0);
    assert.equal(srv.seen.length, 0);
  });
});
