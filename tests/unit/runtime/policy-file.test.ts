import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { DEFAULT_POLICY } from "../../../src/domain/maintenance-policy.js";
import { loadPolicyFile } from "../../../src/runtime/policy-file.js";
import { tempDir } from "../../support/paths.js";
import { catchQuiesce } from "../helpers.js";

describe("loadPolicyFile", () => {
  const t = tempDir();
  const file = (name: string, text: string) => {
    const p = join(t.dir, name);
    writeFileSync(p, text);
    return p;
  };
  const ok: [string, string, string, Partial<typeof DEFAULT_POLICY>][] = [
    [
      "top-level YAML",
      "p1.yaml",
      "drain_timeout: 2m\non_deadline: abort_and_review\n",
      { drainTimeoutMs: 120_000, onDeadline: "abort_and_review" },
    ],
    [
      "a maintenance: section of quiesce.yaml",
      "p2.yaml",
      "store: /x.db\nmaintenance:\n  unknown_side_effects: fail\n  accept_new_work: false\n",
      { unknownSideEffects: "fail" },
    ],
    ["JSON", "p3.json", '{"drain_timeout": "5s"}', { drainTimeoutMs: 5000 }],
    ["an empty file: the defaults", "p4.yaml", "", {}],
  ];
  for (const [name, f, text, want] of ok)
    test(name, () =>
      assert.deepEqual(loadPolicyFile(file(f, text)), { ...DEFAULT_POLICY, ...want }),
    );
  const bad: [string, string, string, RegExp][] = [
    ["not YAML", "b1.yaml", "a: [1,\n", /b1\.yaml: not valid YAML or JSON/],
    [
      "a bad value, named with the file",
      "b2.yaml",
      "on_deadline: later\n",
      /b2\.yaml: on_deadline: "later" is not one of checkpoint_and_stop, abort_and_review/,
    ],
    ["an unknown key", "b3.yaml", "maintenance:\n  drain: 5s\n", /b3\.yaml: unknown key "drain"/],
  ];
  for (const [name, f, text, want] of bad)
    test(name, () => {
      const e = catchQuiesce(() => loadPolicyFile(file(f, text)));
      assert.equal(e.code, "INVALID_INPUT");
      assert.match(e.message, want);
    });
  test("a missing file", () =>
    assert.match(
      catchQuiesce(() => loadPolicyFile(join(t.dir, "nope.yaml"))).message,
      /cannot read the policy file/,
    ));
  test("cleanup", () => t.cleanup());
});
