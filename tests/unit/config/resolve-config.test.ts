import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ConfigFile } from "../../../src/config/config-file.js";
import {
  CONFIG_DEFAULTS,
  type ConfigFlags,
  type ConfigSource,
  resolveConfig,
  type ResolvedConfig,
} from "../../../src/config/resolve-config.js";

const loaded = (file: ConfigFile) => ({ path: "/etc/quiesce/quiesce.yaml", file });

/**
 * One row per setting: a distinct value for each source, where to find the result, and the
 * value each source should produce. Every row is run through all eight source combinations.
 */
interface Row {
  setting: keyof ResolvedConfig["sources"];
  flag: Partial<ConfigFlags>;
  envName: string;
  envValue: string;
  file: ConfigFile;
  read: (c: ResolvedConfig) => unknown;
  want: Record<ConfigSource, unknown>;
}

const ROWS: Row[] = [
  {
    setting: "store",
    flag: { store: "/flag.db" },
    envName: "QUIESCE_STORE",
    envValue: "/env.db",
    file: { store: "/file.db" },
    read: (c) => c.store,
    want: { flag: "/flag.db", env: "/env.db", file: "/file.db", default: undefined },
  },
  {
    setting: "system",
    flag: { system: "flag-sys" },
    envName: "QUIESCE_SYSTEM",
    envValue: "env-sys",
    file: { system: "file-sys" },
    read: (c) => c.system,
    want: { flag: "flag-sys", env: "env-sys", file: "file-sys", default: "quiesce" },
  },
  {
    setting: "alertWebhook",
    flag: { alertWebhook: "http://127.0.0.1:1001/flag" },
    envName: "QUIESCE_ALERT_WEBHOOK",
    envValue: "http://127.0.0.1:1002/env",
    file: { alerts: { webhook: { url: "http://127.0.0.1:1003/file" } } },
    read: (c) => c.alerts.webhook?.url ?? null,
    want: {
      flag: "http://127.0.0.1:1001/flag",
      env: "http://127.0.0.1:1002/env",
      file: "http://127.0.0.1:1003/file",
      default: null,
    },
  },
  {
    setting: "alertCommand",
    flag: { alertCmd: "flag-cmd" },
    envName: "QUIESCE_ALERT_CMD",
    envValue: "env-cmd",
    file: { alerts: { command: "file-cmd" } },
    read: (c) => c.alerts.command?.command ?? null,
    want: { flag: "flag-cmd", env: "env-cmd", file: "file-cmd", default: null },
  },
  {
    setting: "probe",
    flag: { probe: "flag {pid}" },
    envName: "QUIESCE_PROBE",
    envValue: "env {pid}",
    file: { takeover: { probe: "file {pid}" } },
    read: (c) => c.takeover.probe,
    want: { flag: "flag {pid}", env: "env {pid}", file: "file {pid}", default: null },
  },
  {
    setting: "probeTimeout",
    flag: { probeTimeout: "1s" },
    envName: "QUIESCE_PROBE_TIMEOUT",
    envValue: "2s",
    file: { takeover: { probeTimeoutMs: 3000 } },
    read: (c) => c.takeover.probeTimeoutMs,
    want: { flag: 1000, env: 2000, file: 3000, default: CONFIG_DEFAULTS.probeTimeoutMs },
  },
  {
    setting: "remoteGrace",
    flag: { remoteGrace: "never" },
    envName: "QUIESCE_REMOTE_GRACE",
    envValue: "2m",
    file: { takeover: { remoteGraceMs: 180_000 } },
    read: (c) => c.takeover.remoteGraceMs,
    want: { flag: null, env: 120_000, file: 180_000, default: CONFIG_DEFAULTS.remoteGraceMs },
  },
  {
    setting: "maxHold",
    flag: { maxHold: "1h" },
    envName: "QUIESCE_MAX_HOLD",
    envValue: "2h",
    file: { check: { maxHoldMs: 10_800_000 } },
    read: (c) => c.check.maxHoldMs,
    want: { flag: 3_600_000, env: 7_200_000, file: 10_800_000, default: null },
  },
];

describe("resolveConfig: flag > env > file > default", () => {
  for (const row of ROWS) {
    for (const mask of [0, 1, 2, 3, 4, 5, 6, 7]) {
      const [hasFlag, hasEnv, hasFile] = [mask & 4, mask & 2, mask & 1].map(Boolean);
      const expected: ConfigSource = hasFlag
        ? "flag"
        : hasEnv
          ? "env"
          : hasFile
            ? "file"
            : "default";
      const given = [hasFlag && "flag", hasEnv && "env", hasFile && "file"]
        .filter(Boolean)
        .join("+");
      test(`${row.setting} given ${given || "nothing"}: the ${expected} value`, () => {
        const c = resolveConfig(
          hasFlag ? row.flag : {},
          hasFile ? loaded(row.file) : null,
          hasEnv ? { [row.envName]: row.envValue } : {},
        );
        assert.deepEqual(row.read(c), row.want[expected]);
        assert.equal(c.sources[row.setting], expected);
      });
    }
  }

  test("nothing configured: the defaults, and only the log sink's settings", () => {
    assert.deepEqual(resolveConfig({}, null, {}), {
      configFile: null,
      store: undefined,
      system: "quiesce",
      alerts: { webhook: null, command: null },
      takeover: { probe: null, probeTimeoutMs: 10_000, remoteGraceMs: 300_000 },
      check: { maxHoldMs: null },
      audit: { paths: [], accept: [] },
      sources: {
        store: "default",
        system: "default",
        alertWebhook: "default",
        alertCommand: "default",
        probe: "default",
        probeTimeout: "default",
        remoteGrace: "default",
        maxHold: "default",
      },
    });
  });

  test("an empty environment variable is unset", () => {
    const c = resolveConfig({}, loaded({ takeover: { probe: "file" } }), { QUIESCE_PROBE: "" });
    assert.equal(c.takeover.probe, "file");
  });

  test("the file's webhook timeout and retries apply to a URL given by flag", () => {
    const file = {
      alerts: { webhook: { url: "http://127.0.0.1:1/f", timeoutMs: 750, retries: 5 } },
    };
    const c = resolveConfig({ alertWebhook: "http://127.0.0.1:2/x" }, loaded(file), {});
    assert.deepEqual(c.alerts.webhook, {
      url: "http://127.0.0.1:2/x",
      timeoutMs: 750,
      attempts: 6,
    });
  });

  test("a webhook without timeout or retries: 5s per attempt, 3 attempts", () => {
    const c = resolveConfig({}, null, { QUIESCE_ALERT_WEBHOOK: "https://127.0.0.1/x" });
    assert.deepEqual(c.alerts.webhook, {
      url: "https://127.0.0.1/x",
      timeoutMs: 5000,
      attempts: 3,
    });
    assert.deepEqual(c.alerts.command, null);
  });
});
