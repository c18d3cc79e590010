import type { Command } from "commander";

export type Register = (program: Command) => Promise<void>;

/**
 * Each command's module, loaded only when that command runs (or all of them, for help and
 * unknown names): `quiesce run` does not pay for the server, the waves or the journal.
 * In the order `quiesce --help` lists them.
 */
export const COMMANDS: Record<string, Register> = {
  run: async (p) => (await import("./commands/run.js")).registerRun(p),
  lock: async (p) => (await import("./commands/lock.js")).registerLock(p),
  state: async (p) => (await import("./commands/state.js")).registerState(p),
  events: async (p) => (await import("./commands/events.js")).registerEvents(p),
  store: async (p) => (await import("./commands/store.js")).registerStore(p),
  check: async (p) => (await import("./commands/check.js")).registerCheck(p),
  incident: async (p) => (await import("./commands/incident.js")).registerIncident(p),
  runs: async (p) => (await import("./commands/runs.js")).registerRuns(p),
  maintenance: async (p) => (await import("./commands/maintenance.js")).registerMaintenance(p),
  drill: async (p) => (await import("./commands/drill.js")).registerDrill(p),
  wave: async (p) => (await import("./commands/wave.js")).registerWave(p),
  audit: async (p) => (await import("./commands/audit.js")).registerAudit(p),
  serve: async (p) => (await import("./commands/serve.js")).registerServe(p),
};

/** The subcommand argv names, past the global options; null when it names none we know. */
export function requestedCommand(argv: readonly string[]): string | null {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--store" || a === "--config") i++;
    else if (a.startsWith("--store=") || a.startsWith("--config=")) continue;
    else return Object.hasOwn(COMMANDS, a) ? a : null;
  }
  return null;
}
