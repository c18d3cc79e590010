#!/usr/bin/env node
// Bundles the CLI (tsc's dist/src/cli/main.js and what it imports) into one file,
// dist/cli/quiesce.cjs, with esbuild, and builds V8's code cache for it; run by `npm run build`
// after tsc. Start-up only (issue 12): as ES modules, `quiesce run` had node resolve, read
// (asynchronously, one by one) and compile some 90 files; one CommonJS file read at once and
// compiled from a code cache costs far less (bench/startup.ts measures it). The library entry
// stays dist/src, plain tsc output; bin/quiesce.js is the only user of the bundles.
//
// A second bundle, dist/cli/quiesce-run.cjs, is the same CLI with `run` as its only command
// (runOnly below): 344 KB where the whole is 610. On a machine where each page first touched
// costs some 10 us, reading, decoding and deserializing the other commands' share made every
// `quiesce run` about 8 ms slower, whole process (bench/startup.ts). bin/quiesce.js picks it
// for `run`; `quiesce run --help` is the same from both, as the CLI registers only the command
// it was asked for.
//
// - CommonJS, one file: each command's module (src/cli/command-table.ts) and each store backend
//   become lazily evaluated parts of it, and the packages they import are required only then,
//   so `run` evaluates no more than it did as separate files.
// - commander and better-sqlite3's JavaScript are bundled; better-sqlite3's native addon loads
//   from its package (nativeAddonFromPackage below). The other packages stay external and load
//   from node_modules as before: pg, yaml and zod (loaded on first use through createRequire),
//   the server's and the agents' libraries.
// - import.meta becomes the bundle's own: its url is dist/cli/quiesce.cjs. `drill` and `serve`
//   do not run from the bundle (bin/quiesce.js): they find files beside their own modules in
//   dist/src (the drill's agents, the dashboard's assets).
// - Each bundle's code cache (quiesce.cjs.cache, quiesce-run.cjs.cache) is written by a first
//   run of a command on a scratch store (train below), so that it holds the functions that
//   path compiles. V8 refuses a cache made by another node or for a source of another
//   length, and bin/quiesce.js then compiles from source as before. V8 does not compare the
//   source's content: a bundle and its cache are only ever written together, here, after
//   dist/cli is emptied; never edit one without the other.
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const BUNDLED = new Set(["commander", "better-sqlite3"]);
const external = [
  ...Object.keys(pkg.dependencies ?? {}),
  ...Object.keys(pkg.peerDependencies ?? {}),
  ...Object.keys(pkg.optionalDependencies ?? {}),
  "pg-native",
].filter((name) => !BUNDLED.has(name));

/**
 * better-sqlite3's JavaScript is bundled, its addon is not: the `bindings` package it asks
 * for the addon finds it from the caller's file, which in a bundle is dist/cli. This stand-in
 * looks where an installed better-sqlite3 keeps it (build/Release) and otherwise asks
 * `bindings` with that package's own directory as the root.
 */
const nativeAddonFromPackage = {
  name: "native-addon-from-package",
  setup(b) {
    b.onResolve({ filter: /^bindings$/ }, () => ({ path: "bindings", namespace: "addon-shim" }));
    b.onLoad({ filter: /.*/, namespace: "addon-shim" }, () => ({
      loader: "js",
      contents: `
        const { existsSync } = require("node:fs");
        const { dirname, join } = require("node:path");
        const { createRequire } = require("node:module");
        const packageJson = require.resolve("better-sqlite3/package.json");
        const moduleRoot = dirname(packageJson);
        module.exports = (name) => {
          const release = join(moduleRoot, "build", "Release", name);
          if (existsSync(release)) return require(release);
          return createRequire(packageJson)("bindings")({ bindings: name, module_root: moduleRoot });
        };`,
    }));
  },
};

/**
 * The command table with `run` alone (src/cli/command-table.ts): the other commands' modules,
 * and what only they import, stay out of the bundle. The build fails if the table's shape
 * changed so that nothing was removed, rather than ship a second copy of the whole CLI.
 */
const runOnly = {
  name: "run-only",
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/]src[\\/]cli[\\/]command-table\.js$/ }, (args) => {
      const table = readFileSync(args.path, "utf8");
      const entry = /^\s+([a-z]+): async \(p\) => .*$/gm;
      const names = [...table.matchAll(entry)].map((m) => m[1]);
      if (!names.includes("run") || names.length < 2)
        throw new Error(`bundle-cli: cannot find the command entries in ${args.path}`);
      const contents = table.replace(entry, (line, name) => (name === "run" ? line : ""));
      return { contents, loader: "js" };
    });
  },
};

const outdir = join(root, "dist", "cli");
rmSync(outdir, { recursive: true, force: true });
const BUNDLES = [
  { file: "quiesce.cjs", plugins: [nativeAddonFromPackage] },
  { file: "quiesce-run.cjs", plugins: [nativeAddonFromPackage, runOnly] },
];
for (const { file, plugins } of BUNDLES) await bundle(file, plugins);

async function bundle(file, plugins) {
  await build({
    entryPoints: [join(root, "dist", "src", "cli", "main.js")],
    outfile: join(outdir, file),
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    external: [...external, ...external.map((name) => `${name}/*`), "better-sqlite3/package.json"],
    define: { "import.meta": "__quiesceImportMeta" },
    // import() of an external package (prom-client, for `check --format prometheus`) becomes
    // require(): code run through vm.Script has no loader for import() on node 20 (it needs
    // --experimental-vm-modules, or an experimental constant that a code cache then loses).
    // Every external package the CLI loads this way has a CommonJS entry.
    supported: { "dynamic-import": false },
    // The file is one function expression, node's CommonJS wrapper written out: bin/quiesce.js
    // compiles it as it is, where wrapping it at run time would copy all of it once more.
    banner: {
      js: [
        "(function (exports, require, module, __filename, __dirname) {",
        'const __quiesceImportMeta = { url: require("node:url").pathToFileURL(__filename).href,',
        '  resolve: (s) => require("node:url").pathToFileURL(require.resolve(s)).href };',
      ].join("\n"),
    },
    footer: { js: "})" },
    plugins,
    // Smaller to read, deserialize and copy at every start (bench/startup.ts). Local names are
    // shortened too: 346 -> 277 KB for `run`'s bundle, 2-9 ms less a `quiesce run` in paired
    // rounds here. Nothing reads a bundled function's or class's name (error names are set as
    // strings), and QUIESCE_DEBUG=1, the one place a stack trace is shown, runs the CLI from
    // dist/src instead (bin/quiesce.js), whose traces name every function and file.
    minifyWhitespace: true,
    minifySyntax: true,
    minifyIdentifiers: true,
    logLevel: "warning",
  });
}

// node reads a file of ASCII into a one-byte string; one non-ASCII character anywhere (an
// ellipsis in a regular expression was one) makes it decode all 800 KB as UTF-8 into a two-byte
// string, slower to read and to compile on every start. esbuild escapes strings, not every
// literal, so the build says where one is.
for (const { file } of BUNDLES) {
  const bundled = readFileSync(join(outdir, file), "latin1");
  const nonAscii = /[^\t\n\r\x20-\x7e]/.exec(bundled);
  if (nonAscii !== null) {
    const line = bundled.slice(0, nonAscii.index).split("\n").length;
    throw new Error(
      `bundle-cli: dist/cli/${file} line ${line} has a character outside printable ASCII; write it as a \\u escape in the source`,
    );
  }
}

// The training run sees none of the builder's QUIESCE_* settings (a config file, alert sinks,
// a crash point): only its scratch store.
const env = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.startsWith("QUIESCE_")),
);
const scratch = mkdtempSync(join(tmpdir(), "quiesce-code-cache-"));
const store = join(scratch, "s.db");
try {
  // The run bundle learns from a `run`; the whole CLI from a `lock list`, which parses, opens
  // the store and reads leases as most of its commands do.
  train(["run", "--store", store, "--lease", "build", "--", "true"]);
  train(["lock", "list", "--store", store]);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

function train(args) {
  const r = spawnSync(process.execPath, [join(root, "bin", "quiesce.js"), ...args], {
    env: { ...env, QUIESCE_BUILD_CODE_CACHE: "1" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  if (r.status !== 0)
    console.warn(
      `bundle-cli: no code cache from \`quiesce ${args[0]}\` (it exited ${r.status}: ${String(r.stderr).trim()}); the CLI works, starting slower`,
    );
}
