import { EffectCause, EffectState } from "../domain/effect-state.js";
import { ErrorCode, QuiesceError } from "../domain/errors.js";
import { EventKind } from "../domain/event.js";
import { RunState, toJsonText } from "../domain/journal-record.js";
import { applyLookup, classifyEffect, type LookupAnswer } from "../domain/recovery.js";
import { crashPoint } from "../fault/crash-points.js";
import { sleep } from "../process/clock.js";
import type { SealedEffect } from "../store/journal-store.js";
import { nextEffect, type EffectPatch } from "./effect-change.js";
import type { Ack, Provider } from "./provider.js";
import type { Run } from "./run.js";

/** Dispatches of one effect before it is quarantined instead of sent again. */
export const MAX_ATTEMPTS = 3;
/** Failed status lookups in a row before the effect is quarantined. */
const MAX_LOOKUP_FAILURES = 3;

export interface DriveOptions {
  /** Poll a pending outcome until it arrives (a live run); false: leave it ACKNOWLEDGED. */
  waitPending: boolean;
  /** Send PLANNED effects (false: recovery's first pass only settles what may have landed). */
  dispatchPlanned?: boolean;
}

export type DriveOutcome = { done: true; result: unknown } | { done: false; state: EffectState };

/**
 * Moves one effect as far as the rules allow (I9), from whatever state it is in: the normal
 * path of a live run and recovery are the same loop. OBSERVED returns its result and is never
 * sent again; DISPATCHED is looked up (or re-sent only to a provider that honours the key), or
 * quarantined; NEEDS_REVIEW throws NEEDS_REVIEW.
 */
export async function driveEffect(run: Run, key: string, o: DriveOptions): Promise<unknown> {
  const r = await advanceEffect(run, key, o);
  if (r.done) return r.result;
  throw new QuiesceError(
    ErrorCode.INTERNAL,
    `effect ${key} of run ${run.id} stopped in ${r.state}`,
  );
}

export async function advanceEffect(run: Run, key: string, o: DriveOptions): Promise<DriveOutcome> {
  let lookupFailures = 0;
  let backoff = 50;
  for (;;) {
    const e = run.records.get(key)!;
    const provider = run.host.providers.get(e.provider);
    const decision = classifyEffect(e.state, provider?.capabilities ?? null, e.result !== null);
    switch (decision.action) {
      case "done":
        return { done: true, result: JSON.parse(e.result!) };
      case "wait_review":
        throw needsReview(run, e);
      case "blocked":
        await run.toReview(`effect ${key}: ${decision.why}`);
        throw needsReview(run, e, decision.why);
      case "quarantine":
        await quarantine(run, key, decision.why);
        throw needsReview(run, run.records.get(key)!);
      case "dispatch": {
        if (o.dispatchPlanned === false) return { done: false, state: e.state };
        const failed = run.lastDispatchError.get(key);
        if (failed !== undefined) {
          // Proven not landed (a lookup said absent) after a failed attempt: try again, a few times.
          if (e.attempt >= MAX_ATTEMPTS)
            throw failed instanceof Error ? failed : new Error("the provider failed");
          await sleep(backoff, run.signal);
          backoff = Math.min(backoff * 2, 2000);
        }
        await run.stopIfDraining();
        await dispatch(run, key, provider!, EffectCause.Progress);
        break;
      }
      case "redispatch":
        if (e.attempt >= MAX_ATTEMPTS) {
          await quarantine(run, key, `no acknowledgement after ${e.attempt} attempts`);
          throw needsReview(run, run.records.get(key)!);
        }
        if (run.lastDispatchError.has(key)) {
          await sleep(backoff, run.signal);
          backoff = Math.min(backoff * 2, 2000);
        }
        await dispatch(run, key, provider!, EffectCause.Redispatch);
        break;
      case "finish_from_record":
        await step(run, key, EffectState.OBSERVED, EffectCause.Progress, {});
        break;
      case "lookup": {
        let answer: LookupAnswer;
        try {
          answer = await provider!.lookup!(key, run.signal);
          lookupFailures = 0;
        } catch (err) {
          if (run.signal.aborted) throw run.signal.reason as Error;
          if (++lookupFailures >= MAX_LOOKUP_FAILURES) {
            await quarantine(
              run,
              key,
              `status lookup failed ${lookupFailures} times: ${(err as Error).message}`,
            );
            throw needsReview(run, run.records.get(key)!);
          }
          await sleep(backoff, run.signal);
          backoff = Math.min(backoff * 2, 2000);
          break;
        }
        const changed = await applyAnswer(run, key, e, answer);
        if (!changed) {
          if (!o.waitPending) return { done: false, state: e.state };
          await sleep(backoff, run.signal);
          backoff = Math.min(backoff * 2, 2000);
        }
        break;
      }
    }
  }
}

/** Records DISPATCHED (durable first, I8), sends, records ACKNOWLEDGED. */
async function dispatch(
  run: Run,
  key: string,
  provider: Provider,
  cause: EffectCause,
): Promise<void> {
  // A run told to stop (a forced drain, a lost lease) sends nothing new: the effect stays
  // PLANNED, which a later run replays, rather than DISPATCHED with nothing sent.
  if (run.signal.aborted) throw run.signal.reason as Error;
  const d = await run.mutateEffect(key, (cur, seq, token) =>
    cur && (cur.state === EffectState.PLANNED || cur.state === EffectState.DISPATCHED)
      ? {
          effect: nextEffect(
            cur,
            EffectState.DISPATCHED,
            cause,
            { attempt: cur.attempt + 1 },
            seq,
            token,
          ),
        }
      : null,
  );
  if (!d) return;
  run.host.lease.assertHeld(); // I4: no new side effect once the lease is surely ours no more
  let ack: Ack;
  try {
    ack = await provider.dispatch({
      key,
      request: JSON.parse(d.request) as unknown,
      attempt: d.attempt,
      signal: run.signal,
      sent: () => crashPoint("effect.after-dispatch"),
    });
  } catch (err) {
    // Landed or not: unknown. The effect stays DISPATCHED and the loop classifies it.
    if (run.signal.aborted) throw run.signal.reason as Error;
    run.lastDispatchError.set(key, err);
    return;
  }
  run.lastDispatchError.delete(key);
  crashPoint("effect.after-ack");
  const result = ack.pending ? null : toJsonText(ack.result);
  const a = await run.mutateEffect(key, (cur, seq, token) =>
    cur?.state === EffectState.DISPATCHED && cur.attempt === d.attempt
      ? {
          effect: nextEffect(
            cur,
            EffectState.ACKNOWLEDGED,
            EffectCause.Progress,
            { requestId: ack.requestId, result },
            seq,
            token,
          ),
        }
      : null,
  );
  if (!a) await lateAck(run, key, ack);
}

/** Applies what a lookup said; false when nothing changed (outcome still pending). */
async function applyAnswer(
  run: Run,
  key: string,
  e: SealedEffect,
  answer: LookupAnswer,
): Promise<boolean> {
  const out = applyLookup(e.state, answer);
  for (const to of out.steps) {
    const patch: EffectPatch = {};
    if (answer.status !== "absent" && answer.requestId !== null) patch.requestId = answer.requestId;
    if (to === EffectState.PLANNED) {
      Object.assign(patch, { requestId: null, result: null });
      await run.host
        .recordEvent(
          run.event(
            EventKind.EffectRedispatch,
            `effect ${key} of run ${run.id} was dispatched (attempt ${e.attempt}) but the provider's lookup says it never landed: it will be sent again`,
            { key, attempt: e.attempt, requestId: e.requestId },
          ),
        )
        .catch(() => undefined);
    }
    if (to === EffectState.OBSERVED && answer.status === "observed")
      patch.result = toJsonText(answer.result);
    if (to === EffectState.NEEDS_REVIEW) {
      await quarantine(run, key, out.why);
      return true;
    }
    await step(run, key, to, EffectCause.Lookup, patch);
  }
  return out.steps.length > 0;
}

async function step(
  run: Run,
  key: string,
  to: EffectState,
  cause: EffectCause,
  patch: EffectPatch,
): Promise<void> {
  await run.mutateEffect(key, (cur, seq, token) => ({
    effect: nextEffect(cur!, to, cause, patch, seq, token),
  }));
}

/**
 * Nobody can tell whether it landed: the effect goes to NEEDS_REVIEW and the run with it
 * (`failed` when the policy says unknown side effects fail the run), in one commit.
 */
export async function quarantine(
  run: Run,
  key: string,
  why: string,
  o: { runState?: "needs_review" | "failed"; from?: readonly EffectState[] } = {},
): Promise<boolean> {
  const runState = o.runState ?? RunState.NEEDS_REVIEW;
  const from = o.from ?? [EffectState.DISPATCHED, EffectState.ACKNOWLEDGED];
  const q = await run.mutateEffect(key, (cur, seq, token) =>
    cur && from.includes(cur.state)
      ? {
          effect: nextEffect(
            cur,
            EffectState.NEEDS_REVIEW,
            EffectCause.Quarantine,
            { reviewReason: why },
            seq,
            token,
          ),
          run: { state: runState, reviewReason: `effect ${key} quarantined: ${why}` },
          event: run.event(
            EventKind.EffectQuarantined,
            `effect ${key} of run ${run.id} quarantined: ${why}`,
            { key, from: cur.state, attempt: cur.attempt, runState },
          ),
        }
      : null,
  );
  return q !== null;
}

/** The provider answered after the effect was quarantined: keep what it said for the reviewer. */
async function lateAck(run: Run, key: string, ack: Ack): Promise<void> {
  await run.host
    .recordEvent(
      run.event(
        EventKind.EffectLateAck,
        `late acknowledgement for effect ${key} of run ${run.id} (request id ${ack.requestId ?? "none"}): it landed`,
        {
          key,
          requestId: ack.requestId,
          result: ack.pending ? null : (ack.result ?? null),
        },
      ),
    )
    .catch(() => undefined);
}

function needsReview(run: Run, e: SealedEffect, why?: string): QuiesceError {
  return new QuiesceError(
    ErrorCode.NEEDS_REVIEW,
    `effect ${e.key} of run ${run.id} needs review: ${why ?? e.reviewReason ?? run.reviewReason ?? "quarantined"} (quiesce runs show ${run.id})`,
    { details: { runId: run.id, key: e.key, state: e.state } },
  );
}
