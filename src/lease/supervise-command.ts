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
  const acquired = await acquireInterruptibly(leases, o, runId, say);
  if ("outcome" in acquired) return acquired;
  startupMark("acquired");
  return runUnderLease(acquired.lease, o, runId, say);
}

/** Signals that arrive while we wait for the lease end the wait: nothing has run yet. */
async function acquireInterruptibly(
  leases: Leases,
  o: SuperviseOptions,
  runId: string,
  say: (line: string) => void,
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
): Promise<SuperviseResult> {
  const base = { runId, token: lease.token };
  const graceMs = o.graceMs ?? 10_000;
  crashPoint("run.after-acquire");
  const noGuard = guardUnavailable();
  if (noGuard !== null)
    say(`${noGuard}: the command is stopped at the lease's deadline only while quiesce runs`);
  let child: GroupChild;
  try {
    const env = {
      ...(o.env ?? process.env),
      QUIESCE_FENCING_TOKEN: String(lease.token),
      QUIESCE_LEASE_SCOPE: lease.scope,
      QUIESCE_RUN_ID: runId,
    };
    child = await GroupChild.start({
      command: { file: resolveExecutable(o.command, env), args: o.args },
      env,
      stdio: ["inherit", "inherit", "inherit"],
      gated: process.platform !== "win32",
      name: "quiesce-run",
      deadline:
        noGuard === null
          ? {
              source: lease,
              graceMs,
              events: {
                onReplaced: (why) => say(why),
                onUnguarded: (why) => say(`${why}: quiesce stops the command itself`),
              },
            }
          : undefined,
    });
    startupMark("spawned (gate and guard)");
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
  return holdCommand(lease, child, { graceMs, leaveChildren: o.leaveChildren ?? false, say }, base);
}
