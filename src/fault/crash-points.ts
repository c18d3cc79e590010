/**
 * Named fault-injection points (after DBOS's debug points). `QUIESCE_CRASH_AT=POINT` makes the
 * process SIGKILL itself when it reaches POINT; `POINT:throw` raises an uncaught error there
 * instead, to exercise the paths that handle our own bugs. Several points: comma-separated.
 * They exist for tests and `quiesce drill`; the variable is read once, at the first point
 * reached, and with it unset a point costs one comparison.
 */
export const CRASH_POINTS = {
  "run.after-acquire":
    "`run` holds the lease, with the pid of the command's gate on it; the gate has not opened",
  "run.before-gate-opened":
    "`run` holds the lease, the command's pid is on it and its guard armed; the gate has not opened",
  "run.after-spawn": "`run` opened the gate: the command is starting, its pid on the lease",

  "run.before-release": "the command ended; `run` has not released the lease yet",
  "break.after-incident": "`lock break` recorded the incident; the lease is not released yet",
  // The journal and maintenance-window runtime: the six points `quiesce drill` kills at.
  "runtime.drain":
    "the runtime is DRAINING with a run in flight and has just refused new work or seen a run reach a checkpoint",
  "effect.before-dispatch":
    "the effect is PLANNED (durable); DISPATCHED is not written, nothing was sent",
  "effect.after-dispatch": "DISPATCHED is durable and the request has left; no acknowledgement yet",
  "effect.after-ack": "the provider acknowledged the request; ACKNOWLEDGED is not written yet",
  "journal.checkpoint-write":
    "inside the transaction that records an effect's result (OBSERVED), before it commits",
  // Rolling patch waves (`quiesce wave run`); the journal's points above strike its patches too.
  "wave.host-running":
    "a host's `running` is durable under its lease; nothing is journalled for it yet",
  "wave.health-passed":
    "the host's patch result is journalled and its health gate passed; neither its run nor its row says so",
  "wave.before-host-final":
    "the host's run is complete in the journal (patched, healthy); its row still says running",
  "runtime.after-quiesced":
    "QUIESCED is durable; STOPPED is not written and the process has not exited",
} as const;
export type CrashPoint = keyof typeof CRASH_POINTS;

/**
 * QUIESCE_CRASH_AT as this process started with it: read once, because process.env is a slow
 * lookup and a journal transition passes several points.
 */
let armed: string | null = null;

export function crashPoint(name: CrashPoint): void {
  armed ??= process.env.QUIESCE_CRASH_AT ?? "";
  if (!armed) return;
  for (const item of armed.split(",")) {
    const [point, mode = "kill"] = item.trim().split(":");
    if (point !== name) continue;
    if (mode === "throw") {
      // Thrown from a fresh tick so that it is genuinely uncaught, as a real bug would be.
      setImmediate(() => {
        throw new Error(`injected failure at ${name} (QUIESCE_CRASH_AT)`);
      });
      return;
    }
    process.kill(process.pid, "SIGKILL");
  }
}
