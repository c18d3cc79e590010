import { Command, CommanderError } from "commander";
import { isQuiesceError, QuiesceError } from "../domain/errors.js";
import { setFatalFallback } from "../process/stop-signals.js";
import { Exit, exitCodeFor, usageErrorHandler } from "./exit-codes.js";
import { handleClosedStdout } from "./stdout-pipe.js";
import { VERSION } from "./version.js";
import { COMMANDS, requestedCommand } from "./command-table.js";
import { startupMark } from "../process/startup-marks.js";

async function buildProgram(): Promise<Command> {
  const program = new Command("quiesce")
    .version(VERSION)
    .description(
      "Crash-safe maintenance for long-running work: leases with heartbeats and fencing tokens.",
    )
    .enablePositionalOptions()
    // Also before the subcommand (`quiesce --store URL store info`); the subcommand's own wins.
    .option("--store <url>", "store for the subcommand: a file path, sqlite:PATH or postgres://...")
    .option("--config <file>", "quiesce.yaml for the subcommand")
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined }); // we print commander's errors ourselves
  const wanted = requestedCommand(process.argv.slice(2));
  for (const [name, register] of Object.entries(COMMANDS))
    if (wanted === null || wanted === name) await register(program);
  program.addHelpText(
    "after",
    "\nStore: --store PATH | sqlite:PATH | postgres://... , or QUIESCE_STORE; default " +
      "/var/lib/quiesce/quiesce.db (root) or ~/.local/state/quiesce/quiesce.db.\n" +
      "Exit codes: 0 ok, 1 failure, 2 bad input, 75 lease not obtained, 76 lease lost.",
  );
  program.hook("preAction", (_program, action) => {
    for (const key of ["store", "config"]) {
      const global = program.getOptionValue(key) as string | undefined;
      if (global !== undefined && action.getOptionValue(key) === undefined)
        action.setOptionValue(key, global);
    }
  });
  // Every subcommand inherits the same error handling; the failing one is remembered so that
  // its help (a bare `quiesce lock`) or its own usage-error report (check) can be given.
  for (const cmd of [program, ...allCommands(program)])
    cmd
      .exitOverride((e) => {
        failing = cmd;
        throw e;
      })
      .configureOutput({ writeErr: () => undefined });
  return program;
}

let failing: Command | null = null;

function allCommands(c: Command): Command[] {
  return c.commands.flatMap((s) => [s, ...allCommands(s)]);
}

function fail(message: string, code: number, error?: unknown): never {
  process.stderr.write(`quiesce: ${message}\n`);
  if (process.env.QUIESCE_DEBUG === "1" && error instanceof Error) {
    process.stderr.write(`${error.stack ?? ""}\n`);
    if (error.cause instanceof Error)
      process.stderr.write(`caused by: ${error.cause.stack ?? error.cause.message}\n`);
  }
  process.exit(code);
}

async function main(): Promise<void> {
  startupMark("cli loaded");
  handleClosedStdout();
  const program = await buildProgram();
  startupMark("command loaded");
  try {
    await program.parseAsync(process.argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      if (
        e.code === "commander.helpDisplayed" ||
        e.code === "commander.version" ||
        e.exitCode === 0
      ) {
        process.exit(0);
      }
      if (e.code === "commander.help") {
        // A command that only groups others (bare `quiesce`, `quiesce wave`): its help.
        process.stdout.write((failing ?? program).helpInformation());
        process.exit(Exit.OK);
      }
      const message = e.message.replace(/^error: /, "").replace(/\s*\n\s*/g, " ");
      const own = failing ? usageErrorHandler(failing) : undefined;
      if (own) process.exit(own(message));
      fail(message, Exit.USAGE, e);
    }
    if (isQuiesceError(e)) fail(e.message, exitCodeFor(e), e);
    fail(
      `internal error: ${(e as Error)?.message ?? String(e)} (QUIESCE_DEBUG=1 shows details)`,
      Exit.FAILURE,
      e,
    );
  }
}

// A bug outside a command that stops its work in a controlled way (run, wave run, the agent
// runtime: they register a stop policy) still ends with one line and exit 1, never a bare trace.
setFatalFallback((e) =>
  fail(`internal error: ${e.message} (QUIESCE_DEBUG=1 shows details)`, Exit.FAILURE, e),
);

export { QuiesceError };
// Not a top-level await: bin/quiesce.js runs the CLI from a CommonJS bundle
// (scripts/bundle-cli.mjs), which has none. The process lives on while main's work is pending.
main().catch((e: unknown) =>
  fail(
    `internal error: ${(e as Error)?.message ?? String(e)} (QUIESCE_DEBUG=1 shows details)`,
    Exit.FAILURE,
    e,
  ),
);
