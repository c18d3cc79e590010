import { EffectState } from "../domain/effect-state.js";
import { ErrorCode, QuiesceError, invalidInput } from "../domain/errors.js";
import { EventKind } from "../domain/event.js";
import { validateEffectKey, validateRunId } from "../domain/journal-names.js";
import {
  effectProblem,
  RunState,
  sealEffect,
  toJsonText,
  type EffectRecord,
  type RunRecord,
} from "../domain/journal-record.js";
import { hostIdentity } from "../process/process-identity.js";
import type { Store } from "../store/store.js";
import { contentOf } from "../domain/journal-record.js";

export interface ResolveInput {
  runId: string;
  key: string;
  /** `observed`: it landed (with `result` if known); `not-sent`: it never did, send it again. */
  as: "observed" | "not-sent";
  reason: string;
  result?: unknown;
  /** Who decided; goes into the event. */
  operator: string;
}

export interface ResolveResult {
  run: RunRecord;
  effect: EffectRecord;
  /** Effects of the run still waiting for a human. */
  remaining: string[];
}

/**
 * A human's reconciliation of a quarantined effect (or of a record that failed validation):
 * `observed` completes it, `not-sent` makes it PLANNED again so the run's next process sends
 * it. Recorded as a `journal.effect_resolved` event with the operator, reason and what the
 * record held before, in the same commit. Once nothing in the run waits for review, the run
 * is suspended again and the runtime can resume it.
 */
export async function resolveEffect(store: Store, i: ResolveInput): Promise<ResolveResult> {
  validateRunId(i.runId, "run");
  validateEffectKey(i.key, "--effect");
  if (i.reason.trim() === "") throw invalidInput("--reason: say why (it goes into the record)");
  const snap = await store.journal.getRun(i.runId);
  if (!snap) throw invalidInput(`no run ${i.runId} in the journal`);
  const { run, effects } = snap;
  const e = effects.find((x) => x.key === i.key);
  if (!e)
    throw invalidInput(
      `run ${i.runId} has no effect ${i.key} (its effects: ${effects.map((x) => x.key).join(", ") || "none"})`,
    );
  const problem = effectProblem(e, run.seq);
  if (e.state !== EffectState.NEEDS_REVIEW && problem === null)
    throw invalidInput(
      `effect ${i.key} is ${e.state} and its record is valid: only a quarantined effect (NEEDS_REVIEW) or a record that failed validation can be resolved`,
    );
  const observed = i.as === "observed";
  const seq = run.seq + 1;
  const resultText = i.result !== undefined ? toJsonText(i.result) : (e.result ?? toJsonText(null));
  const sealed = sealEffect({
    ...contentOf(e),
    state: observed ? EffectState.OBSERVED : EffectState.PLANNED,
    prevState: EffectState.NEEDS_REVIEW,
    seq,
    requestId: observed ? e.requestId : null,
    result: observed ? resultText : null,
    reviewReason: null,
  });
  const remaining = effects
    .filter((x) => x.key !== i.key)
    .filter((x) => x.state === EffectState.NEEDS_REVIEW || effectProblem(x, seq) !== null)
    .map((x) => x.key);
  const runState =
    run.state === RunState.NEEDS_REVIEW && remaining.length === 0 ? RunState.SUSPENDED : run.state;
  const reviewReason =
    remaining.length === 0 ? null : `effect(s) still waiting for review: ${remaining.join(", ")}`;
  const r = await store.journal.resolve({
    runId: run.runId,
    key: i.key,
    expectedSeq: run.seq,
    seq,
    expectedChecksum: e.checksum,
    effect: sealed,
    runState,
    runReviewReason: run.state === RunState.NEEDS_REVIEW ? reviewReason : run.reviewReason,
    event: {
      kind: EventKind.EffectResolved,
      scope: run.scope,
      token: null,
      runId: run.runId,
      host: hostIdentity().host,
      pid: process.pid,
      message: `${i.operator} resolved effect ${i.key} of run ${run.runId} as ${i.as}: ${i.reason}`,
      detail: {
        key: i.key,
        as: i.as,
        reason: i.reason,
        operator: i.operator,
        before: { state: e.state, requestId: e.requestId, result: e.result, seq: e.seq, problem },
      },
    },
  });
  if (!r.ok)
    throw new QuiesceError(
      ErrorCode.INVALID_TRANSITION,
      r.reason === "missing"
        ? `run ${i.runId} or its effect ${i.key} disappeared while resolving`
        : `run ${i.runId} changed while resolving (its process is still writing?); look again with \`quiesce runs show ${i.runId}\``,
    );
  const after = await store.journal.getRun(i.runId);
  return {
    run: after!.run,
    effect: after!.effects.find((x) => x.key === i.key)!,
    remaining,
  };
}
