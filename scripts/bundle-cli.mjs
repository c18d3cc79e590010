#!/usr/bin/env node
// Bundles the CLI (tsc's dist/src/cli/main.js and what it imports) into dist/cli with esbuild,
// run by `npm run build` after tsc. Start-up only (issue 12): node resolves and loads some 90
// files for `quiesce run`, and one file a command costs far less. The library entry stays
// dist/src, plain tsc output; bin/quiesce.js is the only user of the bundle.
//
// - ESM with code splitting: each command's module (src/cli/command-table.ts) and each store
//   backend stay behind their dynamic import, in chunks of their own, so `run` loads no more
//   than it did as separate files. ESM chunks keep the .js names (the package is "type":
//   "module"); nothing is renamed.
// - Packages with native code, optional parts or files of their own stay external and load
//   from node_modules as before: better-sqlite3 (its addon), pg, yaml and zod (loaded on first
//   use through createRequire), the server's and the agents' libraries. commander is bundled.
// - `drill` and `serve` do not run from the bundle (bin/quiesce.js): they find files next to
//   their own modules (the drill's agents, the dashboard's assets).
import { build } from "esbuild";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const BUNDLED = new Set(["commander"]);
const external = [
  ...Object.keys(pkg.dependencies ?? {}),
  ...Object.keys(pkg.peerDependencies ?? {}),
  ...Object.keys(pkg.optionalDependencies ?? {}),
  "pg-native",
].filter((name) => !BUNDLED.has(name));

const outdir = join(root, "dist", "cli");
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { main: join(root, "dist", "src", "cli", "main.js") },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  chunkNames: "chunks/[name]-[hash]",
  external: [...external, ...external.map((name) => `${name}/*`)],
  // commander is CommonJS: its require() of node's modules needs a require in ESM output.
  banner: {
    js: 'import { createRequire as __quiesceCreateRequire } from "node:module"; const require = __quiesceCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
});
