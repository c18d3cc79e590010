import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { REPO, tempDir } from "../support/paths.js";

/**
 * The four subpath exports as a user gets them: `npm pack`, installed into a fresh project next
 * to the frameworks (taken from this repository's node_modules, offline), used from plain
 * JavaScript and compiled by strict TypeScript.
 */
const JS = `
import { openRuntime } from "quiesce";
import { journaledTool, journaledTools, providersOf, withRun } from "quiesce/ai";
import { journaledMcpClient } from "quiesce/mcp";
import { fetchProvider, journaledFetch } from "quiesce/fetch";
import { browserCheckpoint } from "quiesce/playwright";
for (const f of [openRuntime, journaledTool, journaledTools, providersOf, withRun, journaledMcpClient, fetchProvider, journaledFetch, browserCheckpoint])
  if (typeof f !== "function") throw new Error("missing export");
console.log("js ok");
`;

const TS = `
import { tool } from "ai";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Page } from "playwright-core";
import { z } from "zod";
import { openRuntime, type Run } from "quiesce";
import { journaledTools, providersOf, idempotencyKeyOf, withRun } from "quiesce/ai";
import { journaledMcpClient } from "quiesce/mcp";
import { fetchProvider, journaledFetch } from "quiesce/fetch";
import { browserCheckpoint, type SubmitResult } from "quiesce/playwright";

const tools = journaledTools(
  { send: tool({ inputSchema: z.object({ id: z.string() }), execute: async (i, o) => ({ id: i.id, key: idempotencyKeyOf(o) }) }) },
  { send: { key: (input) => \`invoice:\${input.id}:send\`, requestId: (out) => out.key } },
);
const mcp = journaledMcpClient(new Client({ name: "c", version: "1" }), { name: "m" });
const payments = fetchProvider({ name: "payments" });
export async function agent(run: Run, page: Page): Promise<SubmitResult> {
  const rt = await openRuntime({ id: "a", providers: [...providersOf(tools), mcp.quiesceProvider, payments] });
  void rt;
  const res: Response = await withRun(run, () => journaledFetch("k:1", "http://127.0.0.1:9/x", { provider: payments }));
  void res;
  return browserCheckpoint(page).submit("order:1", { action: "buy", perform: () => page.click("#b") });
}
`;

test("npm pack; a fresh project imports quiesce/ai, /mcp, /fetch, /playwright from JavaScript and strict TypeScript", (t) => {
  const tmp = tempDir("quiesce-consumer-");
  t.after(tmp.cleanup);
  const packed = execFileSync("npm", ["pack", "--ignore-scripts", "--pack-destination", tmp.dir], {
    cwd: REPO,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  const tarball = join(tmp.dir, packed.trim().split("\n").pop()!);
  const app = join(tmp.dir, "app");
  execFileSync("mkdir", ["-p", app]);
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "app", version: "1.0.0", type: "module", private: true }),
  );
  const nm = (p: string) => join(REPO, "node_modules", p);
  // Offline: the tarball, and the peers and TypeScript from this repository's node_modules.
  const install = spawnSync(
    "npm",
    [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      "--install-links",
      tarball,
    ],
    { cwd: app, encoding: "utf8" },
  );
  assert.equal(install.status, 0, install.stderr);
  for (const dep of [
    "ai",
    "@modelcontextprotocol",
    "@ai-sdk",
    "playwright-core",
    "zod",
    "typescript",
    "@types",
    "@standard-schema",
    "@vercel",
    "@opentelemetry",
  ])
    spawnSync("cp", ["-r", nm(dep), join(app, "node_modules/")]);
  writeFileSync(join(app, "main.mjs"), JS);
  const js = spawnSync(process.execPath, ["main.mjs"], { cwd: app, encoding: "utf8" });
  assert.equal(js.status, 0, js.stderr);
  assert.match(js.stdout, /^js ok/);
  writeFileSync(join(app, "agent.ts"), TS);
  writeFileSync(
    join(app, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        skipLibCheck: true, // the AI SDK's own .d.ts files do not pass exactOptionalPropertyTypes
        lib: ["ES2023", "DOM"],
        types: ["node"],
      },
      files: ["agent.ts"],
    }),
  );
  const tsc = spawnSync(
    process.execPath,
    [join(app, "node_modules/typescript/bin/tsc"), "-p", app],
    {
      encoding: "utf8",
    },
  );
  assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
});
