import { sha256Hex } from "./sha256.js";
import { EffectState, isEffectState, isLegalEdge } from "./effect-state.js";

/** A run's life: `active` while a live process works it; the rest survive the process. */
export const RunState = {
  ACTIVE: "active",
  /** Stopped at a checkpoint (drain, or recovered after a crash): may be resumed. */
  SUSPENDED: "suspended",
  NEEDS_REVIEW: "needs_review",
  COMPLETED: "completed",
  FAILED: "failed",
} as const;
export type RunState = (typeof RunState)[keyof typeof RunState];
export const RUN_STATES: readonly RunState[] = Object.values(RunState);

export function isRunState(s: unknown): s is RunState {
  return typeof s === "string" && (RUN_STATES as readonly string[]).includes(s);
}

/** Runs recovery looks at: everything a crash can leave half-done. */
export function isOpenRun(state: RunState): boolean {
  return state === RunState.ACTIVE || state === RunState.SUSPENDED;
}

export interface RunRecord {
  runId: string;
  runtimeId: string;
  /** The lease scope every write of this run is fenced by (I3). */
  scope: string;
  state: RunState;
  /** Checkpoint sequence: one more for every write to the run or any of its effects. */
  seq: number;
  /** The lease token of the last write. */
  token: number;
  /** JSON text: what the run's own code checkpointed (where it was, what it uses next). */
  checkpoint: string | null;
  reviewReason: string | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * One side effect as journalled. JSON values are kept as the exact text that was written, so
 * the checksum is over bytes both backends store unchanged.
 */
export interface EffectRecord {
  runId: string;
  key: string;
  /** Order of planning within the run. */
  ordinal: number;
  provider: string;
  state: EffectState;
  /** The state before the last transition (null when created): validation checks the edge. */
  prevState: EffectState | null;
  /** The run's checkpoint sequence at this effect's last write. */
  seq: number;
  /** How many times it was dispatched. */
  attempt: number;
  token: number;
  /** JSON text of what is sent. */
  request: string;
  /** The provider's id for the request, from its acknowledgement. */
  requestId: string | null;
  /** JSON text of the result the run uses next; null: none yet. */
  result: string | null;
  /** JSON text of free context (browser agents: URL, identity, page state hash, last action). */
  context: string | null;
  reviewReason: string | null;
  checksum: string;
  createdAt: number;
  updatedAt: number;
}

/** The fields the writer decides; store times are outside the checksum. */
export type EffectContent = Omit<EffectRecord, "checksum" | "createdAt" | "updatedAt">;

const CHECKSUM_VERSION = 1;

/** sha256 over every field the writer decides, in a fixed order. */
export function effectChecksum(e: EffectContent): string {
  const fields = [
    CHECKSUM_VERSION,
    e.runId,
    e.key,
    e.ordinal,
    e.provider,
    e.state,
    e.prevState,
    e.seq,
    e.attempt,
    e.token,
    e.request,
    e.requestId,
    e.result,
    e.context,
    e.reviewReason,
  ];
  return sha256Hex(JSON.stringify(fields));
}

/**
 * The fields the writer decides, copied from any record that has them (no checksum, no store
 * times). Field by field, never spread: every record built from it has one shape, whatever
 * object it came from, so the journal's hot path (the checksum, the statement parameters)
 * reads them without V8 going megamorphic over a dozen shapes.
 */
export function contentOf(e: EffectContent): EffectContent {
  return {
    runId: e.runId,
    key: e.key,
    ordinal: e.ordinal,
    provider: e.provider,
    state: e.state,
    prevState: e.prevState,
    seq: e.seq,
    attempt: e.attempt,
    token: e.token,
    request: e.request,
    requestId: e.requestId,
    result: e.result,
    context: e.context,
    reviewReason: e.reviewReason,
  };
}

/** The record with its checksum, in the one shape contentOf gives. */
export function sealEffect(e: EffectContent): Omit<EffectRecord, "createdAt" | "updatedAt"> {
  const content = contentOf(e);
  return Object.assign(content, { checksum: effectChecksum(content) });
}

/**
 * Why a stored effect cannot be trusted, or null. Recovery never advances past a record that
 * fails this (I9): a bad checksum, an unknown state, an edge the state machine forbids, or
 * fields that contradict the state (a "partial" record).
 */
export function effectProblem(e: EffectRecord, runSeq: number): string | null {
  if (!isEffectState(e.state)) return `unknown state "${String(e.state)}"`;
  if (e.prevState !== null && !isEffectState(e.prevState))
    return `unknown previous state "${String(e.prevState)}"`;
  if (effectChecksum(e) !== e.checksum)
    return "checksum mismatch: the record was changed outside quiesce or is corrupt";
  if (!isLegalEdge(e.prevState, e.state))
    return `impossible transition ${e.prevState ?? "(new)"} -> ${e.state}`;
  if (e.seq > runSeq) return `its sequence ${e.seq} is ahead of the run's ${runSeq}`;
  if (!isJsonText(e.request)) return "its request is not valid JSON";
  if (e.result !== null && !isJsonText(e.result)) return "its result is not valid JSON";
  if (e.context !== null && !isJsonText(e.context)) return "its context is not valid JSON";
  switch (e.state) {
    case EffectState.PLANNED:
      if (e.result !== null || e.requestId !== null)
        return "PLANNED but it carries a request id or result";
      return null;
    case EffectState.DISPATCHED:
      if (e.attempt < 1) return "DISPATCHED with no dispatch attempt counted";
      if (e.result !== null || e.requestId !== null)
        return "DISPATCHED but it carries a request id or result (a partial acknowledgement)";
      return null;
    case EffectState.ACKNOWLEDGED:
      return e.attempt < 1 ? "ACKNOWLEDGED but never dispatched" : null;
    case EffectState.OBSERVED:
      return e.result === null ? "OBSERVED without a result" : null;
    case EffectState.NEEDS_REVIEW:
      return e.reviewReason === null ? "NEEDS_REVIEW without a reason" : null;
  }
}

/** Problems of a run and its effects, one sentence each; empty when all can be trusted. */
export function runProblems(run: RunRecord, effects: readonly EffectRecord[]): string[] {
  const out: string[] = [];
  if (!isRunState(run.state)) out.push(`run ${run.runId} has unknown state "${String(run.state)}"`);
  if (run.checkpoint !== null && !isJsonText(run.checkpoint))
    out.push(`run ${run.runId}: its checkpoint is not valid JSON`);
  for (const e of effects) {
    if (e.runId !== run.runId) out.push(`effect ${e.key} belongs to run ${e.runId}`);
    const p = effectProblem(e, run.seq);
    if (p !== null) out.push(`effect ${e.key} failed validation: ${p}`);
  }
  return out;
}

export function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** JSON text of a value the caller gave; `undefined` becomes null (JSON has no undefined). */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value ?? null);
}
