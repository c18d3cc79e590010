import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cli } from "../support/cli.js";
import { REPO, tempDir } from "../support/paths.js";

/** The first ```js block of the README's "The library" section. */
function readmeExample(): string {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### The library"));
  const m = /```js\n([\s\S]*?)```/.exec(section);
  assert.ok(m, "the README has a JavaScript example under The library");
  return m[1]!;
}

test("the README's library example runs as plain JavaScript on this Node, and releases its lease", async () => {
  const t = tempDir("quiesce-readme-");
  // Inside the package, so that `import "quiesce"` resolves to this build (self-reference).
  const file = join(REPO, "dist", `readme-example-${process.pid}.mjs`);
  try {
    writeFileSync(file, readmeExample());
    const store = join(t.dir, "q.db");
    const r = spawnSync(process.execPath, [file], {
      encoding: "utf8",
      env: { ...process.env, QUIESCE_STORE: store },
      timeout: 30_000,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^done under token 1\n$/);
    const list = await cli(["lock", "list", "--json", "--store", store]);
    assert.deepEqual((JSON.parse(list.stdout) as { leases: unknown[] }).leases, []);
    const state = await cli(["state", "get", "patch:wave", "step", "--store", store]);
    assert.equal(state.stdout, "1\n");
  } finally {
    rmSync(file, { force: true });
    t.cleanup();
  }
});

const CONSUMER = `import { openLeases, QuiesceError, runCheck, type CheckCollector } from "quiesce";

const mine: CheckCollector = {
  name: "mine",
  collect: () => Promise.resolve({ findings: [], metrics: [] }),
};
const leases = await openLeases({ store: process.env.QUIESCE_STORE });
const lease = await leases.acquire("x", { ttl: "30s" });
try {
  const report = await runCheck(leases.store, { maxHoldMs: null, windowMs: 60_000 }, [mine]);
  console.log(lease.token, report.status, QuiesceError.name);
} finally {
  await lease.release();
  await leases.close();
}
`;

test("the published types compile in a strict consumer project (skipLibCheck: false)", (t) => {
  const dir = tempDir("quiesce-consumer-");
  try {
    const run = (cmd: string, args: string[], cwd: string) =>
      spawnSync(cmd, args, { cwd, encoding: "utf8", timeout: 180_000 });
    // --ignore-scripts: packing must not run `prepare` (a build), which empties dist/cli
    // under the test files running beside this one (seen: ENOENT for dist/cli/quiesce.cjs).
    const pack = run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir.dir], REPO);
    assert.equal(pack.status, 0, pack.stderr);
    const tarball = join(dir.dir, pack.stdout.trim().split("\n").at(-1)!);
    const app = join(dir.dir, "app");
    spawnSync("mkdir", [app]);
    writeFileSync(
      join(app, "package.json"),
      '{ "name": "app", "private": true, "type": "module" }',
    );
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          skipLibCheck: false,
          noEmit: true,
          types: ["node"],
        },
        files: ["index.ts"],
      }),
    );
    writeFileSync(join(app, "index.ts"), CONSUMER);
    // Types only: the native module is not built (--ignore-scripts).
    const ts = JSON.parse(
      readFileSync(join(REPO, "node_modules/typescript/package.json"), "utf8"),
    ) as {
      version: string;
    };
    const install = run(
      "npm",
      [
        ...["install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"],
        ...[tarball, `typescript@${ts.version}`, "@types/node@20"],
      ],
      app,
    );
    if (install.status !== 0 && /E(NOTFOUND|AI_AGAIN|CONNREFUSED|TIMEDOUT)/.test(install.stderr)) {
      if (process.env.CI === "true") assert.fail(`npm install failed: ${install.stderr}`);
      return t.skip(`the npm registry is not reachable: ${install.stderr.split("\n")[0]}`);
    }
    assert.equal(install.status, 0, install.stderr);
    const tsc = run(
      process.execPath,
      [join(app, "node_modules/typescript/bin/tsc"), "-p", app],
      app,
    );
    assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
  } finally {
    dir.cleanup();
  }
});
