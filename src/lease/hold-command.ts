import { isQuiesceError } from "../domain/errors.js";
import { formatDuration } from "../domain/duration.js";
import { runEnding, type GuardVerdict } from "../domain/run-ending.js";
import { crashPoint } from "../fault/crash-points.js";
import type { ChildExit, GroupChild } from "../process/child-runner.js";
import { isZombie } from "../process/signals.js";
import { onStopSignals } from "../process/stop-signals.js";
import { startupMark } from "../process/startup-marks.js";
import type { Lease } from "./lease.js";
import type { SuperviseResult } from "./supervise-result.js";

export interface HoldOptions {
  graceMs: number;
  leaveChildren: boolean;
  say: (line: string) => void;
}

type Base = { runId: string; token: number };

/**
 * The part of `quiesce run` between spawning the command's gate and releasing the lease: record
 * the pid, open the gate, follow signals and the lease, and end truthfully (run-ending.ts).
 */
export async function holdCommand(
  lease: Lease,
  child: GroupChild,
  o: HoldOptions,
  base: Base,
): Promise<SuperviseResult> {
  const { graceMs, say } = o;
  // A loss noticed on waking from a stop may turn out to be a lapse after the command had
  // exited; the event is written once the ending is known.
  lease.holdLossEvent();
  const lost = (): SuperviseResult => {
    lease.recordLoss();
    return {
      outcome: "lease_lost",
      exitCode: 76,
      ...base,
      reason: lease.lostReason ?? "lease lost",
    };
  };
  let stopping: "signal" | "lost" | "fatal" | null = null;
  let fatalError: Error | null = null;
  const signalsSeen: NodeJS.Signals[] = [];

  const stopForLoss = () => {
    if (lease.isReleased || stopping === "lost") return;
    // A command that already exited is not "stopped": how it ended decides (run-ending.ts).
    if (child.hasExited || isZombie(child.pid)) return;
    stopping = "lost";
    lease.recordLoss();
    say(
      `${lease.lostReason ?? "lease lost"}; terminating the command (SIGTERM, SIGKILL after ${formatDuration(graceMs)})`,
    );
    void child.terminate(graceMs);
  };
  const disposeSignals = onStopSignals({
    graceful: (sig) => {
      signalsSeen.push(sig);
      stopping ??= "signal";
      say(
        `${sig}: passing it to the command; the lease is released when it exits (again to kill it)`,
      );
      child.signal(sig);
    },
    forceful: (sig) => {
      signalsSeen.push(sig);
      say(`${sig} again: killing the command`);
      child.signal("SIGKILL");
    },
    fatal: (e) => {
      if (stopping === "fatal") return;
      stopping = "fatal";
      fatalError = e;
      say(`internal error: ${e.message}; stopping the command, then releasing the lease`);
      void child.terminate(graceMs);
    },
    watchdog: { ms: Math.max(30_000, graceMs + 10_000), exitCode: () => 1 },
  });
  lease.signal.addEventListener("abort", stopForLoss, { once: true });

  try {
    // Spawned before the lease (superviseCommand), the command's pid came with the
    // acquisition; spawned after it, it is recorded now. Either way before the gate opens (I8).
    const recordedWithLease =
      lease.record.owner.childPid === child.pid &&
      lease.record.owner.childPidStart === child.startTime;
    crashPoint("run.before-gate-opened");
    const notRecorded = recordedWithLease ? null : await recordChild(lease, child.pid);
    if (notRecorded !== null) {
      // The command never started: its gate stays shut; end the waiting shell.
      await endUnstarted(child);
      if (lease.lost) return lost();
      await lease.release(`command not started: ${notRecorded}`).catch(() => undefined);
      return {
        outcome: "internal_error",
        exitCode: 1,
        ...base,
        error: `could not record the command's pid (${notRecorded}), so it was not started`,
      };
    }
    // The last check before anything runs: a holder paused since the pid was recorded must not
    // start its command under a lease that is gone (open() refuses past the deadline).
    if (lease.lost || !child.open(lease.token)) {
      await endUnstarted(child);
      void lease.lost; // marks the loss if only the deadline said so
      say("the lease's deadline passed before the command could start; it did not run");
      return lost();
    }
    crashPoint("run.after-spawn");
    startupMark("pid recorded, gate opened");
    const exit = await child.exited;
    startupMark("command exited");
    // The guard is asked when the lease is lost, and also when a signal we did not send ended
    // the command: the guard may have fired at the deadline a few milliseconds before this
    // process's own clock reached it (its clock is /proc/uptime, in 10 ms steps), and a command
    // it terminated must end as a loss (76), not as the command's own exit (143).
    const killedByOthers = stopping === null && (exit.signal !== null || exit.exitCode > 128);
    const guard: GuardVerdict =
      !lease.lost && !killedByOthers ? "armed" : child.guard ? await child.guard.status() : "none";
    const ending = runEnding({ stoppedForLoss: stopping === "lost", leaseLost: lease.lost, guard });

    if (ending === "lease_lost") {
      // The guard's clock can reach the deadline a moment before ours: it is the loss.
      if (!lease.lost)
        lease.markLost("the deadline guard stopped the command at the lease's deadline");
      // Anything the command left in its group must not outlive the lease either.
      child.signal("SIGKILL");
      child.finish();
      lease.recordLoss();
      const r = await lease.release("command stopped after the lease was lost").catch(() => null);
      if (r?.ok === false)
        say(`the late release was refused, as it should be: ${r.reason.replace("_", " ")}`);
      return lost();
    }
    const leftovers = o.leaveChildren ? 0 : await child.stopLeftovers(graceMs);
    if (leftovers > 0)
      say(
        `${leftovers} process${leftovers === 1 ? "" : "es"} left behind by the command ${leftovers === 1 ? "was" : "were"} stopped`,
      );
    child.finish();
    startupMark("leftovers checked");
    crashPoint("run.before-release");
    return await releaseAfter(
      lease,
      exit,
      { stopping, fatalError, signalsSeen, ending, leftovers, say },
      base,
    );
  } finally {
    disposeSignals();
    lease.signal.removeEventListener("abort", stopForLoss);
  }
}

async function endUnstarted(child: GroupChild): Promise<void> {
  child.signal("SIGKILL");
  await child.close();
  child.finish();
}

/** The command ended and its group is empty: release, and say how it went. */
async function releaseAfter(
  lease: Lease,
  exit: ChildExit,
  s: {
    stopping: "signal" | "lost" | "fatal" | null;
    fatalError: Error | null;
    signalsSeen: NodeJS.Signals[];
    ending: "completed" | "lapsed_after_exit";
    leftovers: number;
    say: (line: string) => void;
  },
  base: Base,
): Promise<SuperviseResult> {
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  if (s.stopping === "fatal") {
    if (lease.lost) lease.recordLoss(); // the loss event was held for the ending; it is a loss
    await lease
      .release(`quiesce failed (${s.fatalError?.message}); command ${how}`)
      .catch(() => undefined);
    return {
      outcome: "internal_error",
      exitCode: 1,
      ...base,
      error: s.fatalError?.message ?? "internal error",
    };
  }
  const why =
    s.signalsSeen.length > 0 ? `stopped by ${s.signalsSeen[0]}; command ${how}` : `command ${how}`;
  let released = false;
  let unreachable = false;
  try {
    released = (await lease.release(why)).ok;
    startupMark("released");
  } catch (e) {
    unreachable = true;
    s.say(`could not release the lease (${(e as Error).message}); it will expire on its own`);
  }
  // Lost only after the command had ended (here, or while this process was stopped): the
  // command's result stands; the lapse is recorded as what it was.
  if (s.ending === "lapsed_after_exit" || (!released && lease.lost)) {
    lease.recordLapse(
      `the command ${how} before the lease lapsed (${lease.lostReason ?? "released late"}); its exit code stands`,
      { exitCode: exit.exitCode },
    );
    s.say(`the lease lapsed after the command had ended (it ${how}); exiting with its code`);
    return {
      outcome: "completed",
      exitCode: exit.exitCode,
      ...base,
      released,
      lapsedAfterExit: true,
      leftoversStopped: s.leftovers,
    };
  }
  if (!released && !unreachable) {
    s.say("the release was refused: the lease had already expired or moved on");
  }
  return {
    outcome: "completed",
    exitCode: exit.exitCode,
    ...base,
    released,
    leftoversStopped: s.leftovers,
  };
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
