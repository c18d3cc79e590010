import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { type ConfigFlags, loadConfig, resolveConfig } from "../../../src/config/resolve-config.js";
import { ErrorCode } from "../../../src/domain/errors.js";
import { tempDir } from "../../support/paths.js";
import { assertQuiesceError } from "../helpers.js";

describe("resolveConfig: bad flags and variables are named", () => {
  const cases: [string, ConfigFlags, NodeJS.ProcessEnv, string][] = [
    [
      "--probe-timeout",
      { probeTimeout: "5x" },
      {},
      '--probe-timeout: "5x" is not a duration (cannot read "5x"); use e.g. 250ms, 90s, 5m, 1h30m',
    ],
    [
      "QUIESCE_MAX_HOLD",
      {},
      { QUIESCE_MAX_HOLD: "0s" },
      'QUIESCE_MAX_HOLD: "0s" must be longer than zero',
    ],
    [
      "--remote-grace",
      { remoteGrace: "soon" },
      {},
      '--remote-grace: "soon" is not a duration (cannot read "soon"); use never or e.g. 250ms, 90s, 5m, 1h30m',
    ],
    [
      "--alert-webhook",
      { alertWebhook: "file:///etc/passwd" },
      {},
      '--alert-webhook: "file:///etc/passwd" is not an http:// or https:// URL',
    ],
    [
      "QUIESCE_ALERT_WEBHOOK",
      {},
      { QUIESCE_ALERT_WEBHOOK: "127.0.0.1:80" },
      'QUIESCE_ALERT_WEBHOOK: "127.0.0.1:80" is not an http:// or https:// URL',
    ],
    ["--alert-cmd", { alertCmd: " " }, {}, "--alert-cmd: is empty"],
    [
      "--system",
      { system: "Ops" },
      {},
      '--system: "Ops" is not a valid system name (lowercase letters, digits, . _ -; at most 64)',
    ],
    [
      "QUIESCE_STORE",
      {},
      { QUIESCE_STORE: "mysql://127.0.0.1/x" },
      'QUIESCE_STORE: "mysql://" stores are not supported; use a file path, sqlite:PATH or postgres://...',
    ],
  ];
  for (const [name, flags, env, message] of cases) {
    test(name, () =>
      assertQuiesceError(() => resolveConfig(flags, null, env), ErrorCode.INVALID_INPUT, message),
    );
  }

  test("a flag wins even over a bad variable it makes irrelevant", () => {
    const c = resolveConfig({ probeTimeout: "3s" }, null, { QUIESCE_PROBE_TIMEOUT: "bad" });
    assert.equal(c.takeover.probeTimeoutMs, 3000);
  });
});

describe("loadConfig", () => {
  test("reads the user's default file and merges it", (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    mkdirSync(join(tmp.dir, "quiesce"));
    const path = join(tmp.dir, "quiesce", "quiesce.yaml");
    writeFileSync(path, "system: backup\ntakeover:\n  probe: ssh {host} true\n");
    const c = loadConfig({ probe: "flag-probe" }, { XDG_CONFIG_HOME: tmp.dir }, 1000);
    assert.equal(c.configFile, path);
    assert.equal(c.system, "backup");
    assert.equal(c.takeover.probe, "flag-probe");
    assert.deepEqual([c.sources.system, c.sources.probe], ["file", "flag"]);
  });

  test("no default file: defaults, and no error", (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const c = loadConfig({}, { XDG_CONFIG_HOME: tmp.dir }, 1000);
    assert.equal(c.configFile, null);
    assert.equal(c.system, "quiesce");
  });

  test("--config naming a missing file is an error", (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const path = join(tmp.dir, "missing.yaml");
    assertQuiesceError(
      () => loadConfig({ config: path }, {}, 1000),
      ErrorCode.INVALID_INPUT,
      `--config: ${path} does not exist`,
    );
  });
});
