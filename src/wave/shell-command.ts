import { spawn } from "node:child_process";
import type { Writable } from "node:stream";
import { constants } from "node:os";
import { invalidInput } from "../domain/errors.js";

/**
 * The user's commands (`--patch`, `--check`, `--health`) are shell command lines with `{host}`
 * (and `{wave}`, `{group}`) filled in, each value shell-quoted. They run in a process group of
 * their own, so that a forced stop or a lost lease stops everything they started, and so that a
 * SIGKILLed agent leaves its patch running to completion rather than half-applied (the host's
 * lease then keeps everyone else off the host until it ends: the patch's pid is recorded on the
 * lease before it runs, see `beforeStart`, and the probe also finds it by its QUIESCE_RUN_ID).
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

/** POSIX single quotes; a quote inside becomes '\''. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9._\-/:=@+]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
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
 * The gate: a shell that holds the pid, blocks on fd 3 and then execs the command (same pid),
 * so that the pid can be recorded before anything runs (as `quiesce run` does). If the agent
 * dies first, the read ends with EOF and the shell exits 125 without running anything.
 */
const GATE = 'read -r _ <&3 || exit 125; exec 3<&-; exec /bin/sh -c "$1"';

export const runShell: CommandRunner = (o) =>
  new Promise((resolve, reject) => {
    if (o.signal.aborted) {
      resolve({ exitCode: null, signal: null, aborted: true });
      return;
    }
    const out = o.outputFd ?? "ignore";
    const gated = o.beforeStart !== undefined;
    const child = gated
      ? spawn("/bin/sh", ["-c", GATE, "quiesce-wave", o.command], {
          stdio: ["ignore", out, out, "pipe"],
          detached: true,
          env: o.env,
        })
      : spawn("/bin/sh", ["-c", o.command], {
          stdio: ["ignore", out, out],
          detached: true,
          env: o.env,
        });
    const gate = gated ? (child.stdio[3] as Writable) : null;
    gate?.on("error", () => undefined); // the shell died before the gate opened
    let aborted = false;
    let refused: Error | null = null;
    let killTimer: NodeJS.Timeout | null = null;
    let abortedAt = 0;
    const onAbort = () => {
      aborted = true;
      abortedAt = Date.now();
      signalGroup(child.pid, "SIGTERM");
      killTimer = setTimeout(() => signalGroup(child.pid, "SIGKILL"), o.graceMs);
    };
    child.once("spawn", () => {
      const pid = child.pid!;
      if (o.signal.aborted) onAbort();
      else o.signal.addEventListener("abort", onAbort, { once: true });
      if (!gate) {
        o.onSpawn?.(pid);
        return;
      }
      o.beforeStart!(pid).then(
        () => {
          gate.end("go\n");
          o.onSpawn?.(pid);
        },
        (e: unknown) => {
          refused = e instanceof Error ? e : new Error(String(e));
          signalGroup(pid, "SIGKILL");
        },
      );
    });
    child.once("error", (e) => {
      o.signal.removeEventListener("abort", onAbort);
      reject(e);
    });
    child.once("exit", (code, sig) => {
      o.signal.removeEventListener("abort", onAbort);
      const settle = () => {
        if (killTimer) clearTimeout(killTimer);
        // Whatever the command left behind in its group goes with it.
        if (aborted) signalGroup(child.pid, "SIGKILL");
        if (refused !== null && !aborted) reject(refused);
        else resolve({ exitCode: code, signal: sig, aborted });
      };
      if (!aborted) return settle();
      // Stopped by us: the shell at the top of the group may die of SIGTERM at once while the
      // patch under it still runs its TERM trap (a rollback). The group keeps the rest of its
      // grace (the kill timer SIGKILLs it when that ends); we answer once it is gone.
      // Bounded: a zombie nobody reaps still answers kill(0), and must not hold the agent.
      void groupGone(child.pid!, abortedAt + o.graceMs + 2000).then(settle);
    });
  });

/** Resolves when no process is left in the group (polled), or at `until` (epoch ms). */
async function groupGone(pgid: number, until: number): Promise<void> {
  while (Date.now() < until) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

function signalGroup(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, sig);
  } catch {
    /* already gone */
  }
}

/** How a command ended, in a few words. */
export function describeExit(e: CommandExit): string {
  if (e.aborted) return "stopped by quiesce";
  if (e.signal) return `killed by ${e.signal} (${128 + (constants.signals[e.signal] ?? 0)})`;
  return `exited ${e.exitCode}`;
}
