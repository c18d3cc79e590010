import { ErrorCode, QuiesceError } from "./errors.js";
import type { MaintenancePolicy } from "./maintenance-policy.js";

/**
 * The maintenance-window protocol of one agent runtime (DESIGN.md, "State machines"):
 * `RUNNING -> DRAINING -> QUIESCED -> STOPPED`, `DRAINING -> NEEDS_REVIEW`. Every transition is
 * committed before what it permits (I8): QUIESCED only with nothing unclassified in flight,
 * STOPPED only after QUIESCED.
 */
export const RuntimeState = {
  RUNNING: "RUNNING",
  DRAINING: "DRAINING",
  QUIESCED: "QUIESCED",
  STOPPED: "STOPPED",
  NEEDS_REVIEW: "NEEDS_REVIEW",
} as const;
export type RuntimeState = (typeof RuntimeState)[keyof typeof RuntimeState];
export const RUNTIME_STATES: readonly RuntimeState[] = Object.values(RuntimeState);

const { RUNNING, DRAINING, QUIESCED, STOPPED, NEEDS_REVIEW } = RuntimeState;

/** Transitions of one process's life. A new process starting is `startupPlan`'s business. */
const EDGES: readonly string[] = [
  `${RUNNING}>${DRAINING}`,
  `${DRAINING}>${QUIESCED}`,
  `${DRAINING}>${NEEDS_REVIEW}`,
  `${QUIESCED}>${STOPPED}`,
];

export function isRuntimeState(s: unknown): s is RuntimeState {
  return typeof s === "string" && (RUNTIME_STATES as readonly string[]).includes(s);
}

export function canRuntimeTransition(from: RuntimeState, to: RuntimeState): boolean {
  return EDGES.includes(`${from}>${to}`);
}

export function assertRuntimeTransition(id: string, from: RuntimeState, to: RuntimeState): void {
  if (canRuntimeTransition(from, to)) return;
  throw new QuiesceError(
    ErrorCode.INVALID_TRANSITION,
    `runtime ${id}: ${from} -> ${to} is not a legal transition`,
    { details: { runtimeId: id, from, to } },
  );
}

/** What blocks QUIESCED (I8): effects in flight whose outcome nobody classified, and runs that
 * have not reached a checkpoint. */
export interface DrainProgress {
  unclassifiedEffects: number;
  activeRuns: number;
}

export function mayQuiesce(p: DrainProgress): boolean {
  return p.unclassifiedEffects === 0 && p.activeRuns === 0;
}

/**
 * What the deadline does to a drain that has not finished (policy `on_deadline` and
 * `unknown_side_effects`). Runs with a dispatched, unacknowledged effect are quarantined
 * (`quarantine`: they wait for review; `fail`: they are failed outright); the others are
 * suspended at their last checkpoint (`checkpoint_and_stop`) or sent to review
 * (`abort_and_review`). Anything quarantined or sent to review makes the runtime NEEDS_REVIEW.
 */
export interface DeadlineDecision {
  /** Run state for runs with an unclassified effect in flight. */
  unclassifiedRuns: "needs_review" | "failed";
  /** Run state for the other runs still active. */
  otherRuns: "suspended" | "needs_review";
  /** The runtime's next state. */
  runtime: typeof QUIESCED | typeof NEEDS_REVIEW;
  summary: string;
}

export function deadlineDecision(
  policy: Pick<MaintenancePolicy, "onDeadline" | "unknownSideEffects">,
  p: DrainProgress & { runsWithUnclassified: number },
): DeadlineDecision {
  const unclassifiedRuns = policy.unknownSideEffects === "fail" ? "failed" : "needs_review";
  const otherRuns = policy.onDeadline === "abort_and_review" ? "needs_review" : "suspended";
  const others = p.activeRuns - p.runsWithUnclassified;
  const review = p.unclassifiedEffects > 0 || (otherRuns === "needs_review" && others > 0);
  const parts: string[] = [];
  if (p.unclassifiedEffects > 0)
    parts.push(
      `${p.unclassifiedEffects} effect(s) dispatched but not acknowledged: quarantined, ` +
        `${p.runsWithUnclassified} run(s) ${unclassifiedRuns === "failed" ? "failed" : "sent to review"} (unknown_side_effects: ${policy.unknownSideEffects})`,
    );
  if (others > 0)
    parts.push(
      `${others} run(s) ${otherRuns === "suspended" ? "suspended at their last checkpoint" : "sent to review"} (on_deadline: ${policy.onDeadline})`,
    );
  if (parts.length === 0) parts.push("nothing was left in flight");
  return {
    unclassifiedRuns,
    otherRuns,
    runtime: review ? NEEDS_REVIEW : QUIESCED,
    summary: `drain deadline passed: ${parts.join("; ")}`,
  };
}

/**
 * What a new process does with the record its predecessor left. A record that never reached
 * QUIESCED means the predecessor died with work in flight: recovery runs before any new work
 * is accepted, and a crash mid-drain is first recorded as NEEDS_REVIEW.
 */
export interface StartupPlan {
  recover: boolean;
  /** Written before recovery, with its reason. */
  first: { to: typeof NEEDS_REVIEW | typeof STOPPED; reason: string } | null;
  /** One sentence for the operator: what was found. */
  found: string;
}

export function startupPlan(
  previous: { state: RuntimeState; maintenanceId: string | null } | null,
): StartupPlan {
  if (previous === null) return { recover: false, first: null, found: "new runtime" };
  const mw = previous.maintenanceId === null ? "" : ` (maintenance ${previous.maintenanceId})`;
  switch (previous.state) {
    case STOPPED:
      return { recover: false, first: null, found: `previous process stopped cleanly${mw}` };
    case QUIESCED:
      return {
        recover: false,
        first: {
          to: STOPPED,
          reason: "the previous process quiesced but exited before recording STOPPED",
        },
        found: `previous process quiesced${mw} and exited before recording STOPPED: nothing was in flight`,
      };
    case RUNNING:
      return {
        recover: true,
        first: null,
        found: "previous process died while RUNNING: recovering its runs before accepting work",
      };
    case DRAINING:
      return {
        recover: true,
        first: { to: NEEDS_REVIEW, reason: `the previous process died while draining${mw}` },
        found: `previous process died while DRAINING${mw}: recorded NEEDS_REVIEW, recovering its runs before accepting work`,
      };
    case NEEDS_REVIEW:
      return {
        recover: true,
        first: null,
        found: `previous process ended in NEEDS_REVIEW${mw}: recovering its runs before accepting work`,
      };
  }
}
