import { spawn, type ChildProcess } from "node:child_process";
import type { Writable } from "node:stream";
import { constants } from "node:os";
import { isQuiesceError } from "../domain/errors.js";
import { crashPoint } from "../fault/crash-points.js";
import { newRunId, type AcquireOptions } from "./acquire-options.js";
import type { Lease } from "./lease.js";
import type { Leases, Refusal } from "./leases.js";
import { resolveExecutable } from "./resolve-command.js";

export interface SuperviseOptions {
  scope: string;
  command: string;
  args: readonly string[];
  acquire?: AcquireOptions;
  /** After the lease is lost: how long the command gets between SIGTERM and SIGKILL. */
  graceMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Status lines for the user ("waiting for ...", "lease lost ..."). */
  onMessage?: (line: string) => void;
}

export type SuperviseResult =
  | { outcome: "not_acquired"; exitCode: 75; refusal: Refusal }
  | { outcome: "interrupted"; exitCode: number; signal: NodeJS.Signals }
  | { outcome: "completed"; exitCode: number; runId: string; token: number; released: boolean }
  | { outcome: "lease_lost"; exitCode: 76; runId: string; token: number; reason: string }
  | { outcome: "spawn_failed"; exitCode: 126 | 127; runId: string; token: number; error: string }
  | { outcome: "internal_error"; exitCode: 1; runId: string; token: number; error: string };

const FORWARDED: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/**
 * `quiesce run`: hold a lease on `scope` for exactly as long as `command` runs.
 *
 * - The command runs in its own process group, so self-fencing can stop all of it, and a
 *   terminal's Ctrl-C reaches it once (through us) rather than twice.
 * - SIGINT/SIGTERM/SIGHUP are forwarded; the lease is released after the command ends (I7).
 *   A second signal sends SIGKILL.
 * - If the lease is lost (I4) the command gets SIGTERM, then SIGKILL after `graceMs`.
 * - An uncaught error in quiesce itself stops the command the same way, then releases.
 */
export async function superviseCommand(
  leases: Leases,
  o: SuperviseOptions,
): Promise<SuperviseResult> {
  const say = o.onMessage ?? (() => undefined);
  const runId = o.acquire?.runId ?? newRunId();
  const commandLine = [o.command, ...o.args].join(" ");

  // Signals that arrive while we wait for the lease end the wait: nothing has run yet.
  const waitAbort = new AbortController();
  let waitSignal: NodeJS.Signals | null = null;
  const onWaitSignal = (sig: NodeJS.Signals) => {
    waitSignal = sig;
    waitAbort.abort(new Error(`interrupted by ${sig}`));
  };
  for (const s of FORWARDED) process.on(s, onWaitSignal);
  let acquired;
  try {
    acquired = await leases.tryAcquire(o.scope, {
      ...o.acquire,
      runId,
      command: o.acquire?.command ?? commandLine,
      signal: waitAbort.signal,
      onWait:
        o.acquire?.onWait ??
        ((p) =>
          say(`waiting for ${p.scope} (${Math.round(p.remainingMs / 1000)}s left): ${p.message}`)),
    });
  } catch (e) {
    if (waitSignal !== null)
      return {
        outcome: "interrupted",
        exitCode: 128 + signalNumber(waitSignal),
        signal: waitSignal,
      };
    throw e;
  } finally {
    for (const s of FORWARDED) process.off(s, onWaitSignal);
  }
  if (!acquired.ok) return { outcome: "not_acquired", exitCode: 75, refusal: acquired };
  return runHolding(acquired.lease, o, runId, say);
}

async function runHolding(
  lease: Lease,
  o: SuperviseOptions,
  runId: string,
  say: (line: string) => void,
): Promise<SuperviseResult> {
  const base = { runId, token: lease.token };
  const graceMs = o.graceMs ?? 10_000;
  crashPoint("run.after-acquire");

  let child: ChildProcess;
  let gate: GatedChild;
  try {
    gate = await startChild(o, lease, runId);
    child = gate.child;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    await lease.release(`command could not be started: ${err.message}`).catch(() => undefined);
    return {
      outcome: "spawn_failed",
      exitCode: err.code === "ENOENT" ? 127 : 126,
      ...base,
      error: err.message,
    };
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );

  let stopping: "signal" | "lost" | "fatal" | null = null;
  let fatalError: unknown = null;
  let killTimer: NodeJS.Timeout | null = null;
  const terminate = () => {
    signalGroup(child, "SIGTERM");
    killTimer = setTimeout(() => signalGroup(child, "SIGKILL"), graceMs);
  };

  const signalsSeen: NodeJS.Signals[] = [];
  const onSignal = (sig: NodeJS.Signals) => {
    signalsSeen.push(sig);
    if (signalsSeen.length === 1) {
      stopping ??= "signal";
      say(
        `${sig}: passing it to the command; the lease is released when it exits (again to kill it)`,
      );
      signalGroup(child, sig);
    } else {
      say(`${sig} again: killing the command`);
      signalGroup(child, "SIGKILL");
    }
  };
  const onLost = () => {
    if (lease.isReleased || stopping === "lost") return;
    stopping = "lost";
    say(
      `${lease.lostReason ?? "lease lost"}; terminating the command (SIGTERM, SIGKILL after ${graceMs} ms)`,
    );
    terminate();
  };
  const onFatal = (e: unknown) => {
    if (stopping === "fatal") return;
    stopping = "fatal";
    fatalError = e;
    say(
      `internal error: ${(e as Error)?.message ?? String(e)}; stopping the command, then releasing the lease`,
    );
    terminate();
  };
  for (const s of FORWARDED) process.on(s, onSignal);
  lease.signal.addEventListener("abort", onLost, { once: true });
  process.on("uncaughtException", onFatal);
  process.on("unhandledRejection", onFatal);

  try {
    crashPoint("run.before-command-recorded");
    const recorded = await recordChild(lease, child.pid!);

    if (recorded !== null) {
      // The command never started: its gate stays shut; end the waiting shell.
      signalGroup(child, "SIGKILL");
      await exited;
      if (lease.lost) {
        return {
          outcome: "lease_lost",
          exitCode: 76,
          ...base,
          reason: lease.lostReason ?? "lease lost",
        };
      }
      await lease.release(`command not started: ${recorded}`).catch(() => undefined);
      return {
        outcome: "internal_error",
        exitCode: 1,
        ...base,
        error: `could not record the command's pid (${recorded}), so it was not started`,
      };
    }
    gate.open();
    crashPoint("run.after-spawn");
    const { code, signal } = await exited;
    if (killTimer) clearTimeout(killTimer);
    if (stopping === "lost") {
      // Anything the command left in its group must not outlive the lease either.
      signalGroup(child, "SIGKILL");
      const r = await lease.release(`command stopped after the lease was lost`).catch(() => null);
      if (r?.ok === false)
        say(`the late release was refused, as it should be: ${r.reason.replace("_", " ")}`);
      return {
        outcome: "lease_lost",
        exitCode: 76,
        ...base,
        reason: lease.lostReason ?? "lease lost",
      };
    }
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    const exitCode = signal ? 128 + signalNumber(signal) : (code ?? 1);
    crashPoint("run.before-release");
    if (stopping === "fatal") {
      await lease
        .release(`quiesce failed (${(fatalError as Error)?.message}); command ${how}`)
        .catch(() => undefined);
      return {
        outcome: "internal_error",
        exitCode: 1,
        ...base,
        error: String((fatalError as Error)?.message ?? fatalError),
      };
    }
    const why =
      signalsSeen.length > 0 ? `stopped by ${signalsSeen[0]}; command ${how}` : `command ${how}`;
    let released = false;
    try {
      const r = await lease.release(why);
      released = r.ok;
      if (!r.ok)
        say(
          `the release was refused (${r.reason.replace("_", " ")}): the lease had already expired or moved on`,
        );
    } catch (e) {
      say(`could not release the lease (${(e as Error).message}); it will expire on its own`);
    }
    if (lease.lost && !released) {
      return {
        outcome: "lease_lost",
        exitCode: 76,
        ...base,
        reason: lease.lostReason ?? "lease lost",
      };
    }
    return { outcome: "completed", exitCode, ...base, released };
  } finally {
    for (const s of FORWARDED) process.off(s, onSignal);
    process.off("uncaughtException", onFatal);
    process.off("unhandledRejection", onFatal);
    lease.signal.removeEventListener("abort", onLost);
  }
}

/**
 * The command waits behind a gate until its pid is recorded on the lease (write-ahead, as I8
 * asks of every action): otherwise a `run` SIGKILLed between spawn and that write would leave
 * a command running that no takeover probe knows about. On POSIX a shell holds the pid, blocks
 * on fd 3, and execs the command (same pid) once `open()` writes to it.
 */
interface GatedChild {
  child: ChildProcess;
  open(): void;
}

const GATE = 'read -r _ <&3 || exit 125; exec 3<&-; exec "$@"';

function startChild(o: SuperviseOptions, lease: Lease, runId: string): Promise<GatedChild> {
  const env = {
    ...(o.env ?? process.env),
    QUIESCE_FENCING_TOKEN: String(lease.token),
    QUIESCE_LEASE_SCOPE: lease.scope,
    QUIESCE_RUN_ID: runId,
  };
  return new Promise((resolve, reject) => {
    let executable: string;
    try {
      executable = resolveExecutable(o.command, env);
    } catch (e) {
      reject(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    if (process.platform === "win32") {
      const child = spawn(executable, [...o.args], { stdio: "inherit", env });
      child.once("spawn", () => resolve({ child, open: () => undefined }));
      child.once("error", reject);
      return;
    }
    const child = spawn("/bin/sh", ["-c", GATE, "quiesce-run", executable, ...o.args], {
      stdio: ["inherit", "inherit", "inherit", "pipe"],
      detached: true,
      env,
    });
    const gate = child.stdio[3] as Writable;
    gate.on("error", () => undefined); // the shell died before the gate opened
    child.once("spawn", () => resolve({ child, open: () => gate.end("go\n") }));
    child.once("error", reject);
  });
}

/** Signals the command's whole process group (it leads one), falling back to the pid. */
function signalGroup(child: ChildProcess, sig: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    if (process.platform === "win32") child.kill(sig);
    else process.kill(-child.pid, sig);
  } catch {
    /* already gone */
  }
}

/** Records the command's pid on the lease (one retry for a passing store error); null when it
 * is recorded, else why not. */
async function recordChild(lease: Lease, pid: number): Promise<string | null> {
  for (let attempt = 1; ; attempt++) {
    try {
      await lease.setChild(pid);
      return null;
    } catch (e) {
      if (isQuiesceError(e, "LEASE_LOST") || attempt >= 2) return (e as Error).message;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

function signalNumber(sig: NodeJS.Signals): number {
  return constants.signals[sig] ?? 0;
}
