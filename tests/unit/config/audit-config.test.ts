import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseConfigText } from "../../../src/config/config-file.js";
import { ErrorCode } from "../../../src/domain/errors.js";
import { assertQuiesceError } from "../helpers.js";

describe("quiesce.yaml: the audit section", () => {
  test("paths and accepted entries", () => {
    const text = `audit:
  paths: [/srv/jobs, /opt/legacy]
  accept:
    - path: /run/backup.lock
      reason: "held by the backup agent; it has no lease yet (ticket OPS-12)"
`;
    assert.deepEqual(parseConfigText(text, "q.yaml"), {
      audit: {
        paths: ["/srv/jobs", "/opt/legacy"],
        accept: [
          {
            path: "/run/backup.lock",
            reason: "held by the backup agent; it has no lease yet (ticket OPS-12)",
          },
        ],
      },
    });
  });

  const bad: [string, string, string][] = [
    [
      "paths is not a list",
      "audit:\n  paths: /srv\n",
      'q.yaml: audit.paths: expected a list of paths, got "/srv"',
    ],
    [
      "a relative path",
      "audit:\n  paths: [srv]\n",
      'q.yaml: audit.paths: item 1: "srv" is not an absolute path',
    ],
    [
      "an entry without a reason",
      "audit:\n  accept:\n    - path: /run/x.lock\n",
      "q.yaml: audit.accept: item 1: reason: is missing",
    ],
    [
      "an empty reason",
      "audit:\n  accept:\n    - { path: /run/x.lock, reason: '' }\n",
      "q.yaml: audit.accept: item 1: reason: is empty",
    ],
    [
      "an entry that is a string",
      "audit:\n  accept:\n    - /run/x.lock\n",
      'q.yaml: audit.accept: item 1: expected a mapping with path and reason, got "/run/x.lock"',
    ],
    [
      "an unknown key in an entry",
      "audit:\n  accept:\n    - { path: /run/x.lock, reason: ok, until: 2025 }\n",
      "q.yaml: audit.accept: item 1: unknown setting until; an entry accepts path, reason",
    ],
    [
      "an unknown audit setting",
      "audit:\n  roots: [/srv]\n",
      "q.yaml: audit.roots: unknown setting; audit accepts paths, accept",
    ],
  ];
  for (const [name, text, message] of bad)
    test(`refused: ${name}`, () =>
      assertQuiesceError(() => parseConfigText(text, "q.yaml"), ErrorCode.INVALID_INPUT, message));
});
