import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseConfigText } from "../../../src/config/config-file.js";
import { ErrorCode } from "../../../src/domain/errors.js";
import { assertQuiesceError } from "../helpers.js";

const FULL = `# every setting
store: postgres://quiesce@127.0.0.1:5432/fleet
system: patch-agent
alerts:
  webhook:
    url: https://127.0.0.1:8443/hooks/abc
    timeout: 2s
    retries: 4
  command: logger -t quiesce
takeover:
  probe: ssh {host} kill -0 {pid}
  probe_timeout: 5s
  remote_grace: 1m30s
check:
  max_hold: 2h
`;

const HINT = "use e.g. 250ms, 90s, 5m, 1h30m";

describe("quiesce.yaml: valid files", () => {
  test("a full file reads into camelCase settings with durations in ms", () => {
    assert.deepEqual(parseConfigText(FULL, "quiesce.yaml"), {
      store: "postgres://quiesce@127.0.0.1:5432/fleet",
      system: "patch-agent",
      alerts: {
        webhook: { url: "https://127.0.0.1:8443/hooks/abc", timeoutMs: 2000, retries: 4 },
        command: "logger -t quiesce",
      },
      takeover: { probe: "ssh {host} kill -0 {pid}", probeTimeoutMs: 5000, remoteGraceMs: 90_000 },
      check: { maxHoldMs: 7_200_000 },
    });
  });

  const empty: [string, string][] = [
    ["an empty file", ""],
    ["only comments", "# nothing configured yet\n"],
    ["sections whose settings are commented out", "alerts:\n  # webhook:\ntakeover:\ncheck:\n"],
  ];
  for (const [name, text] of empty) {
    test(`${name} configures nothing`, () => {
      assert.deepEqual(parseConfigText(text, "quiesce.yaml"), {});
    });
  }

  test("only the webhook URL: the rest stays absent", () => {
    const text = "alerts:\n  webhook:\n    url: http://127.0.0.1:9/x\n";
    assert.deepEqual(parseConfigText(text, "q.yaml"), {
      alerts: { webhook: { url: "http://127.0.0.1:9/x" } },
    });
  });

  test("remote_grace: never is null; 0s is zero", () => {
    assert.deepEqual(parseConfigText("takeover:\n  remote_grace: never\n", "q.yaml"), {
      takeover: { remoteGraceMs: null },
    });
    assert.deepEqual(parseConfigText("takeover:\n  remote_grace: 0s\n", "q.yaml"), {
      takeover: { remoteGraceMs: 0 },
    });
  });
});

describe("quiesce.yaml: every problem is one sentence naming the file and the setting", () => {
  const hook = (extra: string) => `alerts:\n  webhook:\n    url: http://127.0.0.1/\n${extra}`;
  const cases: [string, string, string][] = [
    // name, YAML, the exact message
    [
      "a webhook timeout that is not a duration",
      hook("    timeout: 5x\n"),
      `quiesce.yaml: alerts.webhook.timeout: "5x" is not a duration (cannot read "5x"); ${HINT}`,
    ],
    [
      "a duration without a unit (YAML reads it as a number)",
      hook("    timeout: 5\n"),
      `quiesce.yaml: alerts.webhook.timeout: "5" is not a duration (it has no unit); ${HINT}`,
    ],
    [
      "a zero timeout",
      "takeover:\n  probe_timeout: 0s\n",
      'quiesce.yaml: takeover.probe_timeout: "0s" must be longer than zero',
    ],
    [
      "a list where a duration belongs",
      "check:\n  max_hold: [1h]\n",
      "quiesce.yaml: check.max_hold: expected a duration such as 90s, got a list",
    ],
    [
      "a remote grace that is neither a duration nor never",
      "takeover:\n  remote_grace: forever\n",
      `quiesce.yaml: takeover.remote_grace: "forever" is not a duration (cannot read "forever"); use never or e.g. 250ms, 90s, 5m, 1h30m`,
    ],
    [
      "a webhook without a URL",
      "alerts:\n  webhook:\n    timeout: 5s\n",
      "quiesce.yaml: alerts.webhook.url: is missing",
    ],
    [
      "a webhook URL that is not http(s)",
      "alerts:\n  webhook:\n    url: ftp://127.0.0.1/x\n",
      'quiesce.yaml: alerts.webhook.url: "ftp://127.0.0.1/x" is not an http:// or https:// URL',
    ],
    [
      "a webhook URL that is not a URL",
      "alerts:\n  webhook:\n    url: hooks.local/x\n",
      'quiesce.yaml: alerts.webhook.url: "hooks.local/x" is not an http:// or https:// URL',
    ],
    [
      "retries out of range",
      hook("    retries: 11\n"),
      "quiesce.yaml: alerts.webhook.retries: expected a whole number from 1 to 10, got the number 11",
    ],
    [
      "retries of zero",
      hook("    retries: 0\n"),
      "quiesce.yaml: alerts.webhook.retries: expected a whole number from 1 to 10, got the number 0",
    ],
    [
      "retries that are not whole",
      hook("    retries: 2.5\n"),
      "quiesce.yaml: alerts.webhook.retries: expected a whole number from 1 to 10, got the number 2.5",
    ],
    [
      "retries quoted as text",
      hook('    retries: "3"\n'),
      'quiesce.yaml: alerts.webhook.retries: expected a whole number from 1 to 10, got "3"',
    ],
    [
      "an unknown top-level key",
      "stor: /var/lib/q.db\n",
      "quiesce.yaml: stor: unknown setting; the file accepts store, system, alerts, takeover, check, audit",
    ],
    [
      "an unknown key in a section",
      "alerts:\n  webhok:\n    url: http://127.0.0.1/\n",
      "quiesce.yaml: alerts.webhok: unknown setting; alerts accepts webhook, command",
    ],
    [
      "an unknown key in a nested section",
      hook("    secret: x\n"),
      "quiesce.yaml: alerts.webhook.secret: unknown setting; alerts.webhook accepts url, timeout, retries",
    ],
    [
      "camelCase instead of snake_case",
      "takeover:\n  probeTimeout: 5s\n",
      "quiesce.yaml: takeover.probeTimeout: unknown setting; takeover accepts probe, probe_timeout, remote_grace",
    ],
    [
      "a section that is not a mapping",
      "alerts: true\n",
      "quiesce.yaml: alerts: expected a mapping of settings, got the boolean true",
    ],
    [
      "a file that is a list",
      "- store: x\n",
      "quiesce.yaml: expected a mapping of settings, got a list",
    ],
    ["a setting without a value", "store:\n", "quiesce.yaml: store: has no value"],
    ["an empty command", 'alerts:\n  command: ""\n', "quiesce.yaml: alerts.command: is empty"],
    [
      "a number where text belongs",
      "takeover:\n  probe: 7\n",
      "quiesce.yaml: takeover.probe: expected text, got the number 7",
    ],
    [
      "a store in a scheme quiesce does not know",
      "store: redis://127.0.0.1/0\n",
      'quiesce.yaml: store: "redis://" stores are not supported; use a file path, sqlite:PATH or postgres://...',
    ],
    [
      "an invalid system name",
      "system: Backup\n",
      'quiesce.yaml: system: "Backup" is not a valid system name (lowercase letters, digits, . _ -; at most 64)',
    ],
    [
      "a YAML syntax error names the line",
      "store: /x.db\nalerts:\n  command: a\n    b: c\n",
      "quiesce.yaml: line 3, column 12: invalid YAML: Nested mappings are not allowed in compact mappings",
    ],
    [
      "a tab used for indentation",
      "store: /x.db\n\tsystem: x\n",
      "quiesce.yaml: line 2, column 1: invalid YAML: Tabs are not allowed as indentation",
    ],
    [
      "a duplicate key is a YAML error",
      "store: /a.db\nstore: /b.db\n",
      "quiesce.yaml: line 2, column 1: invalid YAML: Map keys must be unique",
    ],
  ];
  for (const [name, text, message] of cases) {
    test(name, () => {
      assertQuiesceError(
        () => parseConfigText(text, "quiesce.yaml"),
        ErrorCode.INVALID_INPUT,
        message,
      );
    });
  }

  test("the file is named as the caller gave it", () => {
    assertQuiesceError(
      () => parseConfigText("stor: x\n", "/etc/quiesce/quiesce.yaml"),
      ErrorCode.INVALID_INPUT,
      "/etc/quiesce/quiesce.yaml: stor: unknown setting; the file accepts store, system, alerts, takeover, check, audit",
    );
  });
});
