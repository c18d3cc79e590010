import { formatDuration } from "./duration.js";
import { invalidInput } from "./errors.js";

/**
 * A remote owner that no probe can reach is presumed dead `remoteGraceMs` after its lease
 * expired. Its command is terminated at its local deadline (expiry minus the safety margin at
 * the latest) and killed `graceMs` after that; a shorter remote grace than the grace plus the
 * margin (the rule errs on the safe side of the arithmetic) would let a takeover on another
 * host start while that command is still being stopped. `null` (never) is always safe.
 */
export function checkRemoteGrace(
  remoteGraceMs: number | null,
  graceMs: number,
  safetyMarginMs: number,
): void {
  if (remoteGraceMs === null) return;
  const needed = graceMs + safetyMarginMs;
  if (remoteGraceMs < needed) {
    throw invalidInput(
      `--remote-grace: ${formatDuration(remoteGraceMs)} is shorter than --grace ${formatDuration(graceMs)} plus the safety margin ${formatDuration(safetyMarginMs)}: a takeover on another host could overlap a command that is still being stopped; use at least ${formatDuration(needed)}, or 'never'`,
    );
  }
}
