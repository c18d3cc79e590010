import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { AlertSink } from "../../../src/alert/alert-sink.js";
import { Alerter } from "../../../src/alert/alerter.js";
import { createLogSink } from "../../../src/alert/log-sink.js";
import { createWebhookSink } from "../../../src/alert/webhook-sink.js";
import type { Alert } from "../../../src/domain/alert.js";
import { refusedPort, sampleAlert, startLocalServer, within } from "./fixtures.js";

const T = { timeout: 20_000 };

/** A sink the test settles by hand. */
function manualSink(name: string) {
  const calls: { alert: Alert; resolve: () => void; reject: (e: Error) => void }[] = [];
  const sink: AlertSink = {
    name,
    send: (alert) => new Promise<void>((resolve, reject) => calls.push({ alert, resolve, reject })),
  };
  return { sink, calls };
}

describe("Alerter", () => {
  test("emit returns before any delivery completes; flush reports each sink", T, async () => {
    const lines: string[] = [];
    const slow = manualSink("slow");
    const alerter = new Alerter([createLogSink((l) => lines.push(l)), slow.sink]);
    alerter.emit(sampleAlert());
    assert.equal(lines.length, 1, "the log line is written during emit()");
    assert.equal(slow.calls.length, 1, "the slow delivery has started");
    await new Promise((r) => setImmediate(r));
    assert.equal(alerter.pending, 1, "the log delivery is done, the slow one still pending");
    slow.calls[0]?.resolve();
    const reports = await alerter.flush(5000);
    assert.deepEqual(
      reports.map((r) => [r.sink, r.status, r.error]),
      [
        ["log", "delivered", undefined],
        ["slow", "delivered", undefined],
      ],
    );
    assert.deepEqual(await alerter.flush(5000), [], "reports are handed out once");
  });

  test(
    "a hanging webhook: emit returns at once, flush gives up at its bound and aborts it",
    T,
    async (t) => {
      const server = await startLocalServer(["hang"]);
      t.after(() => server.close());
      const failures: [string, string][] = [];
      const alerter = new Alerter(
        [createLogSink(() => undefined), createWebhookSink({ url: server.url, timeoutMs: 60_000 })],
        { onFailure: (_a, sink, e) => void failures.push([sink, e.message]) },
      );
      const t0 = performance.now();
      alerter.emit(sampleAlert());
      assert.ok(performance.now() - t0 < 50, "emit() did not wait for the endpoint");
      // Let the request reach the endpoint, so it is the flush bound that cuts it.
      while (server.received.length === 0) await new Promise((r) => setTimeout(r, 10));
      const reports = await within(alerter.flush(200), 10_000, "flush to give up");
      const webhook = `webhook ${new URL(server.url).origin}`;
      assert.deepEqual(
        reports.map((r) => [r.sink, r.status]),
        [
          ["log", "delivered"],
          [webhook, "abandoned"],
        ],
      );
      assert.deepEqual(failures, [
        [
          webhook,
          `${webhook}: abandoned, still undelivered when the process stopped waiting (200ms)`,
        ],
      ]);
      assert.equal(alerter.pending, 0);
      // The request was really cut, so it cannot keep the process alive.
      await within(server.received[0]!.closed, 5000, "the request to be closed");
    },
  );

  test(
    "a refused port: onFailure gets the alert after the retries, and flush awaits it",
    T,
    async () => {
      const port = await refusedPort();
      const seen: { alert: Alert; sink: string; message: string }[] = [];
      let recorded = false;
      const alerter = new Alerter(
        [createWebhookSink({ url: `http://127.0.0.1:${port}/`, attempts: 3, backoffMs: 10 })],
        {
          onFailure: async (alert, sink, e) => {
            seen.push({ alert, sink, message: e.message });
            await new Promise((r) => setTimeout(r, 30)); // e.g. writing alert.failed to the store
            recorded = true;
          },
        },
      );
      const alert = sampleAlert();
      alerter.emit(alert);
      const [report] = await alerter.flush(10_000);
      assert.equal(report?.status, "failed");
      assert.match(report?.error ?? "", /not delivered after 3 attempts; last: .*ECONNREFUSED/);
      assert.equal(seen.length, 1);
      assert.equal(seen[0]?.alert, alert);
      assert.equal(seen[0]?.sink, `webhook http://127.0.0.1:${port}`);
      assert.equal(seen[0]?.message, report?.error);
      assert.equal(recorded, true, "flush waited for the failure handler");
    },
  );

  test(
    "a sink that throws, rejects, or a handler that throws never reaches the caller",
    T,
    async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (e: unknown) => unhandled.push(e);
      process.on("unhandledRejection", onUnhandled);
      try {
        const throwing: AlertSink = {
          name: "throws",
          send: () => {
            throw new Error("sync bug");
          },
        };
        const rejecting: AlertSink = {
          name: "rejects",
          send: () => Promise.reject(new Error("down")),
        };
        const ok = manualSink("ok");
        const alerter = new Alerter([throwing, rejecting, ok.sink], {
          onFailure: () => {
            throw new Error("handler bug");
          },
        });
        assert.doesNotThrow(() => alerter.emit(sampleAlert()));
        assert.equal(ok.calls.length, 1, "a broken sink does not stop the others");
        ok.calls[0]?.resolve();
        const reports = await alerter.flush(5000);
        assert.deepEqual(
          reports.map((r) => [r.sink, r.status, r.error]),
          [
            ["throws", "failed", "sync bug"],
            ["rejects", "failed", "down"],
            ["ok", "delivered", undefined],
          ],
        );
        await new Promise((r) => setTimeout(r, 20)); // let any stray rejection surface
        assert.deepEqual(unhandled, []);
      } finally {
        process.off("unhandledRejection", onUnhandled);
      }
    },
  );

  test("a delivery that fails after flush abandoned it is reported once", T, async () => {
    const late = manualSink("late");
    const failures: string[] = [];
    const alerter = new Alerter([late.sink], {
      onFailure: (_a, _s, e) => void failures.push(e.message),
    });
    alerter.emit(sampleAlert());
    const reports = await alerter.flush(20);
    late.calls[0]?.reject(new Error("too late"));
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(
      reports.map((r) => r.status),
      ["abandoned"],
    );
    assert.equal(failures.length, 1);
    assert.deepEqual(await alerter.flush(1000), []);
  });
});
