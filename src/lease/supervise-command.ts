import { spawn, type ChildProcess } from "node:child_process";
import { constants } from "node:os";
import { isQuiesceError } from "../domain/errors.js";
import { crashPoint } from "../fault/crash-points.js";
import { newRunId, type AcquireOptions } from "./acquire-options.js";
import type { Lease } from "./lease.js";
import type { Leases, Refusal } from "./leases.js";

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
  try {
    child = await startChild(o, lease, runId);
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
    await lease.setChild(child.pid!).catch((e: unknown) => {
      if (!isQuiesceError(e, "LEASE_LOST"))
        say(`could not record the command's pid: ${(e as Error).message}`);
    });
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

function startChild(o: SuperviseOptions, lease: Lease, runId: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(o.command, [...o.args], {
      stdio: "inherit",
      detached: process.platform !== "win32",
      env: {
        ...(o.env ?? process.env),
        QUIESCE_FENCING_TOKEN: String(lease.token),
        QUIESCE_LEASE_SCOPE: lease.scope,
        QUIESCE_RUN_ID: runId,
      },
    });
    child.once("spawn", () => resolve(child));
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

function signalNumber(sig: NodeJS.Signals): number {
  return constants.signals[sig] ?? 0;
}
