import { invalidInput } from "../domain/errors.js";
import { GroupChild } from "../process/child-runner.js";
import { guardUnavailable, type DeadlineSource } from "../process/deadline-guard.js";
import { shellQuote } from "../process/shell-quote.js";
import { signalNumber } from "../process/signals.js";

/**
 * The user's commands (`--patch`, `--check`, `--health`) are shell command lines with `{host}`
 * (and `{wave}`, `{group}`) filled in, each value shell-quoted. They run in a process group of
 * their own, so that a forced stop or a lost lease stops everything they started. A SIGKILLed
 * agent's patch may go on until the host lease's local deadline (its deadline guard then stops
 * it), rather than being cut off at once; the host's lease keeps everyone else off the host
 * meanwhile: the patch's pid is recorded on the lease before it runs (`beforeStart`), and the
 * probe also finds it by its QUIESCE_RUN_ID.
 */

const PLACEHOLDER = /\{([a-z_]+)\}/g;
export const PLACEHOLDERS = ["host", "wave", "group"] as const;

/** Refuses an empty template or an unknown placeholder (a typo would run a wrong command). */
export function checkTemplate(template: string, what: string): string {
  if (template.trim() === "") throw invalidInput(`${what}: the command is empty`);
  for (const m of template.matchAll(PLACEHOLDER)) {
    if (!(PLACEHOLDERS as readonly string[]).includes(m[1]!))
      throw invalidInput(
        `${what}: unknown placeholder {${m[1]}} (known: ${PLACEHOLDERS.map((p) => `{${p}}`).join(" ")})`,
      );
  }
  return template;
}

export function fillTemplate(
  template: string,
  vars: Partial<Record<(typeof PLACEHOLDERS)[number], string>>,
): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => {
    const v = vars[name as (typeof PLACEHOLDERS)[number]];
    return v === undefined ? whole : shellQuote(v);
  });
}

export interface CommandRun {
  /** The filled-in command line, run with /bin/sh -c. */
  command: string;
  env: NodeJS.ProcessEnv;
  /** An open file to append output to; null discards it. */
  outputFd: number | null;
  /** Aborting stops the command's process group: SIGTERM, then SIGKILL after `graceMs`. */
  signal: AbortSignal;
  graceMs: number;
  /**
   * Write-ahead (I8): called with the pid before the command may run. The command waits
   * behind a gate until this resolves, and never runs if it rejects (or the agent dies first).
   */
  beforeStart?: (pid: number) => Promise<void>;
  /** Called once the command has started (its request has left, in journal terms). */
  onSpawn?: (pid: number) => void;
  /**
   * The lease the command runs under: a deadline guard stops it when the lease's local
   * deadline passes, even if this agent is stopped or dead (I11).
   */
  deadline?: DeadlineSource;
  /**
   * The command carries `arm MS` lines to a remote guard on its standard input (`--via`): after
   * every renewal of `deadline`, the time left is written there.
   */
  armRemote?: boolean;
}

export interface CommandExit {
  /** The exit code, or null when a signal ended it. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** We stopped it (abort). */
  aborted: boolean;
}

/** Anything that can carry out a command: the shell by default; benchmarks and tests swap it. */
export type CommandRunner = (run: CommandRun) => Promise<CommandExit>;

/**
 * Runs the command through the process layer (src/process): its own group, the gate when
 * `beforeStart` is given, a deadline guard when it runs under a lease, and what it leaves in
 * its group stopped before we answer.
 */
export const runShell: CommandRunner = async (o) => {
  if (o.signal.aborted) return { exitCode: null, signal: null, aborted: true };
  const out = o.outputFd ?? "ignore";
  const gated = o.beforeStart !== undefined;
  const armed = o.armRemote === true && o.deadline !== undefined;
  const child = await GroupChild.start({
    command: { shell: o.command },
    env: o.env,
    stdio: [armed ? "pipe" : "ignore", out, out],
    gated,
    name: "quiesce-wave",
    deadline:
      o.deadline !== undefined && guardUnavailable() === null
        ? { source: o.deadline, graceMs: o.graceMs }
        : undefined,
  });
  const stdin = armed ? child.process.stdin : null;
  stdin?.on("error", () => undefined); // the remote side went away; its guard keeps the deadline
  const unarm = armed
    ? o.deadline!.onRenewed(() => {
        if (stdin?.writable) stdin.write(`arm ${Math.floor(o.deadline!.remainingMs())}\n`);
      })
    : () => undefined;
  // Set once we stop it (an abort, or a deadline that passed before the gate opened).
  const stop: { done: Promise<unknown> | null } = { done: null };
  const onAbort = (): void => {
    stop.done ??= child.terminate(o.graceMs);
  };
  if (o.signal.aborted) onAbort();
  else o.signal.addEventListener("abort", onAbort, { once: true });
  try {
    if (gated && stop.done === null) {
      try {
        await o.beforeStart!(child.pid);
      } catch (e) {
        child.signal("SIGKILL");
        await child.exited;
        if (stop.done === null) throw e;
      }
      // Refused when the deadline passed since the pid was recorded: nothing runs late.
      if (stop.done === null && !child.open()) {
        onAbort();
      } else if (stop.done === null) o.onSpawn?.(child.pid);
    } else if (!gated) o.onSpawn?.(child.pid);
    const exit = await child.exited;
    if (stop.done !== null) await stop.done;
    else await child.stopLeftovers(o.graceMs); // nothing it started outlives it (I11)
    return { exitCode: exit.code, signal: exit.signal, aborted: stop.done !== null };
  } finally {
    o.signal.removeEventListener("abort", onAbort);
    unarm();
    stdin?.end();
    child.finish();
  }
};

/** How a command ended, in a few words. */
export function describeExit(e: CommandExit): string {
  if (e.aborted) return "stopped by quiesce";
  if (e.signal) return `killed by ${e.signal} (${128 + signalNumber(e.signal)})`;
  return `exited ${e.exitCode}`;
}
