import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createWebhookSink } from "../../../src/alert/webhook-sink.js";
import { refusedPort, sampleAlert, startLocalServer, within } from "./fixtures.js";

const T = { timeout: 20_000 };
const live = () => new AbortController().signal;

describe("webhook sink", () => {
  test("POSTs the alert as exact JSON with content-type application/json", T, async (t) => {
    const server = await startLocalServer([204]);
    t.after(() => server.close());
    const alert = sampleAlert();
    await createWebhookSink({ url: server.url }).send(alert, live());
    assert.equal(server.received.length, 1);
    const [req] = server.received;
    assert.equal(req?.method, "POST");
    assert.equal(req?.contentType, "application/json");
    assert.equal(req?.body, JSON.stringify(alert));
    assert.deepEqual(JSON.parse(req?.body ?? ""), alert);
  });

  test("a 500 is retried, and the retry that gets a 200 delivers", T, async (t) => {
    const server = await startLocalServer([500, 200]);
    t.after(() => server.close());
    await createWebhookSink({ url: server.url, backoffMs: 10 }).send(sampleAlert(), live());
    assert.equal(server.received.length, 2);
    assert.equal(server.received[1]?.body, server.received[0]?.body, "the same document again");
  });

  test(
    "a status that stays non-2xx fails after all attempts, naming the last status",
    T,
    async (t) => {
      const server = await startLocalServer([404]);
      t.after(() => server.close());
      const sink = createWebhookSink({ url: server.url, attempts: 3, backoffMs: 10 });
      const origin = new URL(server.url).origin;
      await assert.rejects(sink.send(sampleAlert(), live()), {
        message: `webhook ${origin}: not delivered after 3 attempts; last: HTTP 404 Not Found`,
      });
      assert.equal(server.received.length, 3);
    },
  );

  test(
    "send() starts no request inside the caller's turn (the first fetch loads undici)",
    T,
    async (t) => {
      const server = await startLocalServer([204]);
      t.after(() => server.close());
      const calls: string[] = [];
      const spy: typeof fetch = (input, init) => {
        calls.push("fetch");
        return fetch(input, init);
      };
      const sent = createWebhookSink({ url: server.url, fetch: spy }).send(sampleAlert(), live());
      calls.push("caller continues");
      await sent;
      assert.deepEqual(calls, ["caller continues", "fetch"]);
    },
  );

  test("a redirect is not followed: the alert never goes to another address", T, async (t) => {
    const server = await startLocalServer([302]);
    t.after(() => server.close());
    const sink = createWebhookSink({ url: server.url, attempts: 1 });
    await assert.rejects(sink.send(sampleAlert(), live()), {
      message: `webhook ${new URL(server.url).origin}: not delivered after 1 attempt; last: HTTP 302 Found`,
    });
    assert.equal(server.received.length, 1);
  });

  test("the sink's name shows the origin, never the secret in the path", () => {
    const sink = createWebhookSink({ url: "https://127.0.0.1:8443/services/T0/B0/s3cr3t?k=v" });
    assert.equal(sink.name, "webhook https://127.0.0.1:8443");
  });

  test("a hanging endpoint: each attempt is aborted at the per-attempt timeout", T, async (t) => {
    const server = await startLocalServer(["hang"]);
    t.after(() => server.close());
    const sink = createWebhookSink({ url: server.url, timeoutMs: 100, attempts: 2, backoffMs: 10 });
    await assert.rejects(sink.send(sampleAlert(), live()), {
      message: `webhook ${new URL(server.url).origin}: not delivered after 2 attempts; last: no answer within 100ms`,
    });
    assert.equal(server.received.length, 2);
    // The client closed both requests itself: the server never answered either.
    await within(Promise.all(server.received.map((r) => r.closed)), 5000, "requests closed");
  });

  test("a refused port fails after the retries with the connection error", T, async () => {
    const port = await refusedPort();
    const sink = createWebhookSink({
      url: `http://127.0.0.1:${port}/x`,
      attempts: 3,
      backoffMs: 10,
    });
    await assert.rejects(
      sink.send(sampleAlert(), live()),
      (e: Error) =>
        e.message.startsWith(
          `webhook http://127.0.0.1:${port}: not delivered after 3 attempts; last: `,
        ) && e.message.includes("ECONNREFUSED"),
    );
  });

  test("the caller's abort ends a backoff wait at once, with no further attempt", T, async (t) => {
    const server = await startLocalServer([503]);
    t.after(() => server.close());
    const sink = createWebhookSink({ url: server.url, attempts: 5, backoffMs: 60_000 });
    const controller = new AbortController();
    const sent = sink.send(sampleAlert(), controller.signal);
    while (server.received.length === 0) await new Promise((r) => setTimeout(r, 10));
    controller.abort(new Error("stop"));
    await within(assert.rejects(sent, { message: "stop" }), 5000, "the abort");
    assert.equal(server.received.length, 1);
  });

  test("the caller's abort ends an attempt in flight", T, async (t) => {
    const server = await startLocalServer(["hang"]);
    t.after(() => server.close());
    const sink = createWebhookSink({ url: server.url, timeoutMs: 60_000 });
    const controller = new AbortController();
    const sent = sink.send(sampleAlert(), controller.signal);
    while (server.received.length === 0) await new Promise((r) => setTimeout(r, 10));
    controller.abort(new Error("stop"));
    await within(assert.rejects(sent, { message: "stop" }), 5000, "the abort");
    await within(server.received[0]!.closed, 5000, "the request closed");
    assert.equal(server.received.length, 1);
  });
});
