import { ErrorCode, QuiesceError } from "./errors.js";

/**
 * A host in a rolling patch wave (DESIGN.md, "Host in a wave"):
 * `pending -> running -> succeeded | failed | unfinished | needs_review | skipped`, durable, every
 * change a fenced write under the wave's lease. A taking-over agent resumes from these states:
 * succeeded hosts are never patched again.
 */
export const HostState = {
  /** Not started. */
  PENDING: "pending",
  /** An agent holds the host's lease and works on it (patch or health gate in flight). */
  RUNNING: "running",
  /** Patched and the health gate passed. Never touched again. */
  SUCCEEDED: "succeeded",
  /** The patch exited non-zero or the health gate failed: counted against the failure budget. */
  FAILED: "failed",
  /** A controlled stop (drain deadline, second signal, error) left it mid-way; `reason` says
   * what is known. The next agent reconciles it from the journal. */
  UNFINISHED: "unfinished",
  /** Nobody can tell whether the patch landed: a human decides (`quiesce runs resolve`). */
  NEEDS_REVIEW: "needs_review",
  /** Its lease is held by another system or wave (or a respected system works on it); not
   * patched. A later `wave run` tries it again. */
  SKIPPED: "skipped",
} as const;
export type HostState = (typeof HostState)[keyof typeof HostState];
export const HOST_STATES: readonly HostState[] = Object.values(HostState);

const { PENDING, RUNNING, SUCCEEDED, FAILED, UNFINISHED, NEEDS_REVIEW, SKIPPED } = HostState;

/**
 * Every legal edge. Succeeded and failed have no way out. A same-state edge only updates the
 * reason (a host skipped again, still unfinished, still waiting for review).
 */
const HOST_EDGES: readonly string[] = [
  `${PENDING}>${RUNNING}`,
  `${PENDING}>${SKIPPED}`,
  `${SKIPPED}>${RUNNING}`,
  `${SKIPPED}>${SKIPPED}`,
  `${RUNNING}>${SUCCEEDED}`,
  `${RUNNING}>${FAILED}`,
  `${RUNNING}>${UNFINISHED}`,
  `${RUNNING}>${NEEDS_REVIEW}`,
  `${UNFINISHED}>${RUNNING}`,
  `${UNFINISHED}>${UNFINISHED}`,
  `${NEEDS_REVIEW}>${RUNNING}`,
  `${NEEDS_REVIEW}>${NEEDS_REVIEW}`,
];

export function isHostState(s: unknown): s is HostState {
  return typeof s === "string" && (HOST_STATES as readonly string[]).includes(s);
}

export function canHostTransition(from: HostState, to: HostState): boolean {
  return HOST_EDGES.includes(`${from}>${to}`);
}

export function assertHostTransition(host: string, from: HostState, to: HostState): void {
  if (canHostTransition(from, to)) return;
  throw new QuiesceError(
    ErrorCode.INVALID_TRANSITION,
    `host ${host}: ${from} -> ${to} is not a legal transition`,
    { details: { host, from, to } },
  );
}

/** Done for good: never worked on again by any agent. */
export function isFinalHostState(s: HostState): boolean {
  return s === SUCCEEDED || s === FAILED;
}

/** Left mid-way by an earlier agent: reconciled from the journal before any new host starts. */
export function isLeftover(s: HostState): boolean {
  return s === RUNNING || s === UNFINISHED || s === NEEDS_REVIEW;
}

/** May be started by a pass: never started, or skipped because it was busy. */
export function isStartable(s: HostState): boolean {
  return s === PENDING || s === SKIPPED;
}

/**
 * The wave as a whole. `running` while an agent works on it (a crashed agent leaves it so; the
 * lease tells live from dead); `stopped` after a controlled stop (run it again to continue);
 * `halted` when something needs a human first (failure budget spent, a health gate failed, a
 * host needs review); `completed` when every host succeeded or failed within the budget.
 */
export const WaveState = {
  CREATED: "created",
  RUNNING: "running",
  STOPPED: "stopped",
  HALTED: "halted",
  COMPLETED: "completed",
} as const;
export type WaveState = (typeof WaveState)[keyof typeof WaveState];
export const WAVE_STATES: readonly WaveState[] = Object.values(WaveState);

const WAVE_EDGES: readonly string[] = [
  `${WaveState.CREATED}>${WaveState.RUNNING}`,
  // A new agent took over from a crashed one.
  `${WaveState.RUNNING}>${WaveState.RUNNING}`,
  `${WaveState.RUNNING}>${WaveState.STOPPED}`,
  `${WaveState.RUNNING}>${WaveState.HALTED}`,
  `${WaveState.RUNNING}>${WaveState.COMPLETED}`,
  `${WaveState.STOPPED}>${WaveState.RUNNING}`,
  `${WaveState.HALTED}>${WaveState.RUNNING}`,
];

export function isWaveState(s: unknown): s is WaveState {
  return typeof s === "string" && (WAVE_STATES as readonly string[]).includes(s);
}

export function canWaveTransition(from: WaveState, to: WaveState): boolean {
  return WAVE_EDGES.includes(`${from}>${to}`);
}

export function assertWaveTransition(wave: string, from: WaveState, to: WaveState): void {
  if (canWaveTransition(from, to)) return;
  throw new QuiesceError(
    ErrorCode.INVALID_TRANSITION,
    `wave ${wave}: ${from} -> ${to} is not a legal transition`,
    { details: { wave, from, to } },
  );
}

export type HostCounts = Record<HostState, number>;

export function countHosts(states: Iterable<HostState>): HostCounts {
  const c = Object.fromEntries(HOST_STATES.map((s) => [s, 0])) as HostCounts;
  for (const s of states) c[s]++;
  return c;
}
