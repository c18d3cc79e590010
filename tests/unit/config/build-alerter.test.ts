import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { buildAlerter } from "../../../src/config/build-alerter.js";
import { parseConfigText } from "../../../src/config/config-file.js";
import { resolveConfig } from "../../../src/config/resolve-config.js";
import { tempDir } from "../../support/paths.js";
import { sampleAlert, startLocalServer } from "../alert/fixtures.js";

const T = { timeout: 20_000 };

describe("buildAlerter", () => {
  test("nothing configured: the log sink alone", () => {
    const alerter = buildAlerter(resolveConfig({}, null, {}));
    assert.deepEqual(alerter.sinkNames, ["log"]);
  });

  test(
    "a config file's webhook and command both receive the alert, and the log line is written",
    T,
    async (t) => {
      const server = await startLocalServer([204]);
      t.after(() => server.close());
      const tmp = tempDir();
      t.after(tmp.cleanup);
      const out = join(tmp.dir, "alert.json");
      const yaml = `alerts:\n  webhook:\n    url: ${server.url}\n    timeout: 2s\n    retries: 1\n  command: cat > "$OUT"\n`;
      const config = resolveConfig(
        {},
        { path: "quiesce.yaml", file: parseConfigText(yaml, "quiesce.yaml") },
        {},
      );
      const lines: string[] = [];
      const alerter = buildAlerter(config, {
        logWrite: (l) => lines.push(l),
        env: { ...process.env, OUT: out },
      });
      const origin = new URL(server.url).origin;
      assert.deepEqual(alerter.sinkNames, ["log", `webhook ${origin}`, "command"]);

      const alert = sampleAlert();
      alerter.emit(alert);
      const reports = await alerter.flush(10_000);
      assert.deepEqual(reports.map((r) => [r.sink, r.status]).sort(), [
        ["command", "delivered"],
        ["log", "delivered"],
        [`webhook ${origin}`, "delivered"],
      ]);
      assert.equal(server.received[0]?.body, JSON.stringify(alert));
      assert.equal(readFileSync(out, "utf8"), `${JSON.stringify(alert)}\n`);
      assert.equal(lines.length, 1);
    },
  );

  test("the configured retries are used: retries: 1 means two POSTs", T, async (t) => {
    const server = await startLocalServer([500]);
    t.after(() => server.close());
    const file = { alerts: { webhook: { url: server.url, timeoutMs: 2000, retries: 1 } } };
    const failures: string[] = [];
    const alerter = buildAlerter(resolveConfig({}, { path: "q.yaml", file }, {}), {
      logWrite: () => undefined,
      onFailure: (_a, sink) => void failures.push(sink),
    });
    alerter.emit(sampleAlert());
    await alerter.flush(15_000);
    assert.equal(server.received.length, 2);
    assert.deepEqual(failures, [`webhook ${new URL(server.url).origin}`]);
  });
});
