#!/usr/bin/env node
// `quiesce --version` answers without loading the CLI; every other command runs from the CLI's
// bundle, dist/cli/quiesce.cjs (quiesce-run.cjs for `run`), compiled from its V8 code cache
// (scripts/bundle-cli.mjs), except `drill` and `serve`, which find files beside their own
// modules in dist/src (ES modules, imported), and any command under QUIESCE_DEBUG=1. This file is CommonJS (bin/package.json says
// so): a CommonJS entry spares node its ES module loader, which `quiesce run` never needs.
// Start-up time: see bench/startup.ts.
"use strict";
const { readFileSync, writeFileSync } = require("node:fs");
const { dirname, join } = require("node:path");

if (process.env.QUIESCE_STARTUP_MARKS === "1")
  globalThis[Symbol.for("quiesce.binStarted")] = performance.now(); // src/process/startup-marks.ts

const FROM_SOURCE_TREE = new Set(["drill", "serve"]);
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  process.stdout.write(`${require("../package.json").version}\n`);
} else if (FROM_SOURCE_TREE.has(subcommand(args)) || process.env.QUIESCE_DEBUG === "1") {
  // QUIESCE_DEBUG=1 shows stack traces: from dist/src they name the functions and files that
  // the bundles' shortened names would hide.
  import("../dist/src/cli/main.js").catch((e) => {
    process.stderr.write(`quiesce: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
} else {
  // `run`, the command started most often and timed most closely, has a bundle of its own
  // without the other commands (scripts/bundle-cli.mjs).
  const bundle = subcommand(args) === "run" ? "quiesce-run.cjs" : "quiesce.cjs";
  runBundle(join(__dirname, "..", "dist", "cli", bundle));
}

/** The subcommand's name, past the global options (as src/cli/command-table.ts reads it). */
function subcommand(argv) {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--store" || a === "--config") i++;
    else if (!a.startsWith("--store=") && !a.startsWith("--config=")) return a;
  }
  return undefined;
}

/**
 * Runs the bundle as node's require() would run a CommonJS file (same arguments), but compiled
 * with V8's code cache beside it when there is one. The bundle is written as node's wrapper
 * function already (scripts/bundle-cli.mjs), so its text is compiled as read, not copied into
 * a wrapper; V8 checks that the cache was made by this
 * node for this source and otherwise compiles from source. QUIESCE_BUILD_CODE_CACHE=1 (the
 * build) writes the cache at exit, with what this run compiled.
 */
function runBundle(file) {
  const { createRequire } = require("node:module");
  const { Script } = require("node:vm");
  const cacheFile = `${file}.cache`;
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined; // none built: compile from source
  }
  // The build refuses a bundle with a character outside printable ASCII (scripts/bundle-cli.mjs):
  // read as latin1 it is the same text, without UTF-8's validation of 600 KB (0.3 ms a start).
  const source = readFileSync(file, "latin1");
  const script = new Script(source, { filename: file, cachedData });
  if (process.env.QUIESCE_BUILD_CODE_CACHE === "1")
    process.once("exit", () => writeFileSync(cacheFile, script.createCachedData()));
  const module = { exports: {}, filename: file };
  script
    .runInThisContext()
    .call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
}
