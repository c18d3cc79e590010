import { formatDuration } from "../domain/duration.js";
import { crashPoint } from "../fault/crash-points.js";
import { GroupChild } from "../process/child-runner.js";
import { guardUnavailable } from "../process/deadline-guard.js";
import { signalNumber } from "../process/signals.js";
import { STOP_SIGNALS } from "../process/stop-signals.js";
import { newRunId, type AcquireOptions } from "./acquire-options.js";
import { holdCommand } from "./hold-command.js";
import type { Lease } from "./lease.js";
import type { Leases } from "./leases.js";
import type { SuperviseResult } from "./supervise-result.js";
import { resolveExecutable } from "./resolve-command.js";
import { startupMark } from "../process/startup-marks.js";

export type { SuperviseResult } from "./supervise-result.js";

export interface SuperviseOptions {
  scope: string;
  command: string;
  args: readonly string[];
  acquire?: AcquireOptions;
  /** After the lease is lost: how long the command gets between SIGTERM and SIGKILL. */
  graceMs?: number;
  /**
   * Leave what the command started in its process group running after it exits (daemons it
   * starts on purpose). They are then outside the lease. Default: they are stopped (TERM, KILL
   * after the grace) before the lease is released.
   */
  leaveChildren?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Status lines for the user ("waiting for ...", "lease lost ..."). */
  onMessage?: (line: string) => void;
}

/**
 * `quiesce run`: hold a lease on `scope` for exactly as long as `command` runs (I11).
 *
 * - The command runs in its own process group behind a gate that opens only once its pid is on
 *   the lease and the lease is checked once more.
 * - A deadline guard, a process of its own, terminates the group when the lease's local
 *   deadline passes without a renewal, even while this process is stopped or dead.
 * - SIGINT/SIGTERM/SIGHUP are forwarded; a second signal sends SIGKILL. The lease is released
 *   after the command ended and what it left in its group was stopped (I7).
 * - The exit code is the command's own unless the lease was lost while it ran (76).
 */
export async function superviseCommand(
  leases: Leases,
  o: SuperviseOptions,
): Promise<SuperviseResult> {
  const say = o.onMessage ?? (() => undefined);
  const runId = o.acquire?.runId ?? newRunId();
  const graceMs = o.graceMs ?? 10_000;
  const noGuard = guardUnavailable();
  // Where a gate exists (not Windows), the command is spawned behind it before the lease is
  // taken, and the acquisition records its pid: one commit, where spawning after the lease
  // took a second one for the pid (I8 either way: the pid is on the lease before the gate
  // opens). The gate starts the deadline guard meanwhile, off this process's path.
  const early = process.platform !== "win32";
  let child: GroupChild | null = null;
  if (early) {
    const started = await spawnGated(o, runId, graceMs, noGuard === null);
    if ("outcome" in started) return started;
    child = started;
    startupMark("gate spawned");
  }
  let acquired: { lease: Lease } | SuperviseResult;
  try {
    acquired = await acquireInterruptibly(leases, o, runId, say, child);
  } catch (e) {
    await child?.close();
    throw e;
  }
  if ("outcome" in acquired) {
    // Nothing ran: the gate never opened, and its shell exits 125.
    await child?.close();
    return acquired;
  }
  startupMark("acquired");
  return runUnderLease(acquired.lease, o, runId, say, child, noGuard, graceMs);
}

/** The command's environment: the lease's scope and the run id (the token comes with the lease). */
function commandEnv(o: SuperviseOptions, runId: string, token: number | null): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...(o.env ?? process.env),
    QUIESCE_LEASE_SCOPE: o.scope,
    QUIESCE_RUN_ID: runId,
  };
  // Spawned before the lease, the gate sets the token itself when it opens.
  if (token === null) delete env.QUIESCE_FENCING_TOKEN;
  else env.QUIESCE_FENCING_TOKEN = String(token);
  return env;
}

/** Spawns the command behind its gate, before the lease is taken (see superviseCommand). */
async function spawnGated(
  o: SuperviseOptions,
  runId: string,
  graceMs: number,
  guarded: boolean,
): Promise<GroupChild | Extract<SuperviseResult, { outcome: "spawn_failed" }>> {
  const env = commandEnv(o, runId, null);
  try {
    return await GroupChild.start({
      command: { file: resolveExecutable(o.command, env), args: o.args },
      env,
      stdio: ["inherit", "inherit", "inherit"],
      gated: true,
      tokenAtOpen: true,
      name: "quiesce-run",
      launchGuard: guarded ? { graceMs } : undefined,
    });
  } catch (e) {
    return spawnFailed(e, runId, null);
  }
}

function spawnFailed(
  e: unknown,
  runId: string,
  token: number | null,
): Extract<SuperviseResult, { outcome: "spawn_failed" }> {
  const err = e as NodeJS.ErrnoException;
  return {
    outcome: "spawn_failed",
    exitCode: err.code === "ENOENT" ? 127 : 126,
    runId,
    token,
    error: err.message,
  };
}

/** Signals that arrive while we wait for the lease end the wait: nothing has run yet. */
async function acquireInterruptibly(
  leases: Leases,
  o: SuperviseOptions,
  runId: string,
  say: (line: string) => void,
  child: GroupChild | null,
): Promise<{ lease: Lease } | SuperviseResult> {
  const waitAbort = new AbortController();
  let waitSignal: NodeJS.Signals | null = null;
  const onWaitSignal = (sig: NodeJS.Signals) => {
    waitSignal = sig;
    waitAbort.abort(new Error(`interrupted by ${sig}`));
  };
  for (const s of STOP_SIGNALS) process.on(s, onWaitSignal);
  try {
    const r = await leases.tryAcquire(o.scope, {
      ...o.acquire,
      runId,
      command: o.acquire?.command ?? [o.command, ...o.args].join(" "),
      ...(child === null ? {} : { child: { pid: child.pid, start: child.startTime } }),
      signal: waitAbort.signal,
      onWait:
        o.acquire?.onWait ??
        ((p) =>
          say(`waiting for ${p.scope} (${formatDuration(p.remainingMs)} left): ${p.message}`)),
    });
    if (!r.ok) return { outcome: "not_acquired", exitCode: 75, refusal: r };
    return { lease: r.lease };
  } catch (e) {
    if (waitSignal !== null)
      return {
        outcome: "interrupted",
        exitCode: 128 + signalNumber(waitSignal),
        signal: waitSignal,
      };
    throw e;
  } finally {
    for (const s of STOP_SIGNALS) process.off(s, onWaitSignal);
  }
}

async function runUnderLease(
  lease: Lease,
  o: SuperviseOptions,
  runId: string,
  say: (line: string) => void,
  early: GroupChild | null,
  noGuard: string | null,
  graceMs: number,
): Promise<SuperviseResult> {
  const base = { runId, token: lease.token };
  crashPoint("run.after-acquire");
  if (noGuard !== null)
    say(`${noGuard}: the command is stopped at the lease's deadline only while quiesce runs`);
  const guardEvents = {
    onReplaced: (why: string) => say(why),
    onUnguarded: (why: string) => say(`${why}: quiesce stops the command itself`),
  };
  let child: GroupChild;
  if (early !== null) {
    child = early;
    if (noGuard === null) child.guardDeadline(lease, graceMs, guardEvents);
  } else {
    try {
      const env = commandEnv(o, runId, lease.token);
      child = await GroupChild.start({
        command: { file: resolveExecutable(o.command, env), args: o.args },
        env,
        stdio: ["inherit", "inherit", "inherit"],
        gated: false, // only Windows comes here (superviseCommand): no gate there
        name: "quiesce-run",
        deadline: noGuard === null ? { source: lease, graceMs, events: guardEvents } : undefined,
      });
      startupMark("spawned (gate and guard)");
    } catch (e) {
      const failed = spawnFailed(e, runId, lease.token);
      await lease.release(`command could not be started: ${failed.error}`).catch(() => undefined);
      return failed;
    }
  }
  return holdCommand(lease, child, { graceMs, leaveChildren: o.leaveChildren ?? false, say }, base);
}
