import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { resolveExecutable } from "../../../src/lease/resolve-command.js";

const root = mkdtempSync(join(tmpdir(), "quiesce-resolve-"));
after(() => rmSync(root, { recursive: true, force: true }));

function dir(name: string): string {
  const d = join(root, name);
  mkdirSync(d, { recursive: true });
  return d;
}
function file(d: string, name: string, mode: number): string {
  const f = join(d, name);
  writeFileSync(f, "#!/bin/sh\nexit 0\n");
  chmodSync(f, mode);
  return f;
}
const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return { code: (e as NodeJS.ErrnoException).code, message: (e as Error).message };
  }
  assert.fail("expected a failure");
};

describe("resolveExecutable", () => {
  test("a bare name is looked up along PATH, in order, skipping entries that do not hold it", () => {
    const empty = dir("empty");
    const first = dir("first");
    const second = dir("second");
    const want = file(first, "tool", 0o755);
    file(second, "tool", 0o755);
    const PATH = ["", empty, join(root, "missing"), first, second].join(":");
    assert.equal(resolveExecutable("tool", { PATH }), want);
  });

  test("an entry holding a directory or a file that cannot run is passed over", () => {
    const a = dir("a");
    const b = dir("b");
    const c = dir("c");
    mkdirSync(join(a, "cmd"));
    file(b, "cmd", 0o644);
    const want = file(c, "cmd", 0o755);
    assert.equal(resolveExecutable("cmd", { PATH: [a, b, c].join(":") }), want);
  });

  test("a name found nowhere is ENOENT (exit 127); an empty PATH finds nothing", () => {
    assert.deepEqual(
      codeOf(() => resolveExecutable("no-such-tool-xyz", { PATH: dir("e2") })),
      {
        code: "ENOENT",
        message: "not found in PATH",
      },
    );
    assert.equal(codeOf(() => resolveExecutable("sh", {})).code, "ENOENT");
    assert.equal(codeOf(() => resolveExecutable("", { PATH: "/bin" })).code, "ENOENT");
  });

  test("a path is checked as given: missing ENOENT, a directory or not executable EACCES", () => {
    const d = dir("paths");
    const plain = file(d, "plain", 0o644);
    const runs = file(d, "runs", 0o755);
    assert.equal(resolveExecutable(runs, {}), runs);
    assert.equal(codeOf(() => resolveExecutable(join(d, "nope"), {})).code, "ENOENT");
    assert.equal(codeOf(() => resolveExecutable(d, {})).code, "EACCES");
    // Even for root: X_OK needs an execute bit somewhere.
    assert.equal(codeOf(() => resolveExecutable(plain, {})).code, "EACCES");
  });
});
