#!/usr/bin/env node
// `quiesce --version` answers without loading the CLI (start-up time: see bench/startup.ts).
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { VERSION } = await import("../dist/src/cli/version.js");
  process.stdout.write(`${VERSION}\n`);
} else {
  await import("../dist/src/cli/main.js");
}
