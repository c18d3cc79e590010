#!/usr/bin/env node
// `quiesce --version` answers without loading the CLI; every other command runs from the CLI's
// bundle in dist/cli (scripts/bundle-cli.mjs), one file a command instead of some ninety, except
// `drill` and `serve`, which find files beside their own modules in dist/src (start-up time:
// see bench/startup.ts).
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
  await import("../dist/cli/main.js");
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
