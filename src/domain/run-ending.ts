/**
 * How `quiesce run` ends once its command has exited: the exit code must tell the truth
 * (issue: "exit 76 hides a command that had finished").
 *
 * - The command was stopped because the lease was lost (by us, or by the deadline guard while
 *   it still ran): `lease_lost`, exit 76.
 * - The lease lapsed only after the command had ended on its own (the holder was stopped or
 *   starved past its deadline and learnt of the exit late; the guard found the command already
 *   exited, or had not fired): `lapsed_after_exit`, the command's own exit code, and the lapse is
 *   recorded as such, not as a loss.
 * - No guard could say (none on this platform, or it died) and the lease is lost: nobody can
 *   tell when the command ended, so the conservative answer, `lease_lost`.
 * - Otherwise `completed`.
 */
export type GuardVerdict = "armed" | "fired_ended" | "fired_running" | "unguarded" | "none";

export interface RunEndingFacts {
  /** We stopped the command because the lease was lost while it ran. */
  stoppedForLoss: boolean;
  /** The lease was lost (deadline, refused renewal or write) by the time the command exited. */
  leaseLost: boolean;
  /** What the deadline guard said once the command had exited. */
  guard: GuardVerdict;
}

export type RunEnding = "completed" | "lease_lost" | "lapsed_after_exit";

export function runEnding(f: RunEndingFacts): RunEnding {
  if (f.stoppedForLoss || f.guard === "fired_running") return "lease_lost";
  if (!f.leaseLost) return "completed";
  if (f.guard === "armed" || f.guard === "fired_ended") return "lapsed_after_exit";
  return "lease_lost";
}
