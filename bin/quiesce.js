#!/usr/bin/env node
// `quiesce --version` answers without loading the CLI; every other command runs from the CLI's
// bundle, dist/cli/quiesce.cjs, compiled from its V8 code cache (scripts/bundle-cli.mjs),
// except `drill` and `serve`, which find files beside their own modules in dist/src. Start-up
// time: see bench/startup.ts.
const args = process.argv.slice(2);
const FROM_SOURCE_TREE = new Set(["drill", "serve"]);
if (process.env.QUIESCE_STARTUP_MARKS === "1")
  (await import("../dist/src/process/startup-marks.js")).startupMark("bin started");
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { VERSION } = await import("../dist/src/cli/version.js");
  process.stdout.write(`${VERSION}\n`);
} else if (FROM_SOURCE_TREE.has(subcommand(args))) {
  await import("../dist/src/cli/main.js");
} else {
  await runBundle(new URL("../dist/cli/quiesce.cjs", import.meta.url).pathname);
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
 * Runs a CommonJS file as node's require() would (same wrapper, same arguments), but compiled
 * with V8's code cache beside it when there is one; V8 checks that the cache was made by this
 * node for this source and otherwise compiles from source. QUIESCE_BUILD_CODE_CACHE=1 (the
 * build) writes the cache at exit, with what this run compiled.
 */
async function runBundle(file) {
  const { readFileSync, writeFileSync } = await import("node:fs");
  const { createRequire } = await import("node:module");
  const { dirname } = await import("node:path");
  const { Script } = await import("node:vm");
  const cacheFile = `${file}.cache`;
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined; // none built: compile from source
  }
  const source = readFileSync(file, "utf8");
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname) {${source}\n})`,
    { filename: file, cachedData },
  );
  if (process.env.QUIESCE_BUILD_CODE_CACHE === "1")
    process.once("exit", () => writeFileSync(cacheFile, script.createCachedData()));
  const module = { exports: {}, filename: file };
  script
    .runInThisContext()
    .call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
}
