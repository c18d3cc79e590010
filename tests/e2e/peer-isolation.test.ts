import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { CLI, REPO } from "../support/paths.js";

/**
 * The frameworks are optional peers: importing `quiesce` (or an adapter, which takes only
 * types from its framework) must not load them. A resolve hook in a child process makes any
 * import of them fail loudly, and records each that was attempted.
 */
const HOOKS = `
const BLOCKED = ["ai", "@modelcontextprotocol/sdk", "playwright-core", "playwright"];
export async function resolve(spec, ctx, next) {
  if (BLOCKED.some((b) => spec === b || spec.startsWith(b + "/")))
    throw new Error("BLOCKED PEER LOADED: " + spec);
  return next(spec, ctx);
}`;
const REGISTER = `import { register } from "node:module";
register("data:text/javascript,${encodeURIComponent(HOOKS)}");`;

function importWithPeersBlocked(entry: string): { status: number | null; out: string } {
  const url = pathToFileURL(join(REPO, entry)).href;
  const r = spawnSync(
    process.execPath,
    [
      "--import",
      `data:text/javascript,${encodeURIComponent(REGISTER)}`,
      "--input-type=module",
      "-e",
      `const m = await import(${JSON.stringify(url)}); console.log(Object.keys(m).sort().join(","));`,
    ],
    { encoding: "utf8" },
  );
  return { status: r.status, out: r.stdout + r.stderr };
}

test("the hook is real: importing a framework through it fails", () => {
  const r = importWithPeersBlocked("dist/src/ops/drill/agents/scripted-model.js");
  assert.notEqual(r.status, 0);
  assert.match(r.out, /BLOCKED PEER LOADED: ai\/test/);
});

for (const [entry, exports] of [
  ["dist/src/index.js", /(^|,)openRuntime(,|$)/],
  ["dist/src/agents/ai.js", /(^|,)journaledTool,journaledTools,/],
  ["dist/src/agents/mcp.js", /(^|,)journaledMcpClient(,|$)/],
  ["dist/src/agents/fetch.js", /(^|,)journaledFetch(,|$)/],
  ["dist/src/agents/playwright.js", /(^|,)browserCheckpoint(,|$)/],
] as const)
  test(`importing ${entry} loads no framework (ai, MCP SDK, playwright-core)`, () => {
    const r = importWithPeersBlocked(entry);
    assert.equal(r.status, 0, r.out);
    assert.doesNotMatch(r.out, /BLOCKED/);
    assert.match(r.out.split("\n")[0] ?? "", exports);
  });

test("the CLI (`quiesce drill --help`) loads no framework either", () => {
  const r = spawnSync(
    process.execPath,
    ["--import", `data:text/javascript,${encodeURIComponent(REGISTER)}`, CLI, "drill", "--help"],
    { encoding: "utf8" },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stdout + r.stderr, /BLOCKED/);
  assert.match(r.stdout, /--agent <name>/);
});
