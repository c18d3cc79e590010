import { EffectState } from "../domain/effect-state.js";
import { isQuiesceError } from "../domain/errors.js";
import { EventKind } from "../domain/event.js";
import { isOpenRun, runProblems, RunState } from "../domain/journal-record.js";
import type { RunSnapshot } from "../store/journal-store.js";
import { advanceEffect } from "./effect-driver.js";
import type { Journal } from "./journal.js";

export interface EffectRecoveryNote {
  key: string;
  from: EffectState;
  to: EffectState;
  requestId: string | null;
  seq: number;
}

/** What recovery found in one run and what it did: the "says what it found" of a restart. */
export interface RunRecovery {
  runId: string;
  before: RunState;
  after: RunState;
  /** Checkpoint sequence after recovery. */
  seq: number;
  effects: EffectRecoveryNote[];
  /** Validation failures: recovery advanced nothing. */
  problems: string[];
  /** A provider or store error that stopped recovery early (the run stays resumable). */
  error: string | null;
  /** That error itself. */
  cause?: unknown;
  summary: string;
}

/**
 * Recovers a run its previous holder left (I9):
 * 1. Every record is validated first (checksum, states, impossible transitions, partial
 *    fields). Any failure: the run goes to NEEDS_REVIEW with the reasons and NOTHING else is
 *    written: recovery never advances past a record it cannot trust.
 * 2. Effects that may have landed (DISPATCHED, ACKNOWLEDGED) are settled: looked up by key,
 *    re-sent only to a provider that honours the key, finished from a recorded result, or
 *    quarantined. OBSERVED is never touched.
 * 3. Only if nothing is in review: PLANNED effects are dispatched again.
 * The run ends suspended (resumable) or in review.
 */
export async function recoverRun(journal: Journal, snap: RunSnapshot): Promise<RunRecovery> {
  const before = snap.run.state;
  const base = { runId: snap.run.runId, before, effects: [] as EffectRecoveryNote[] };
  if (!isOpenRun(before))
    return {
      ...base,
      after: before,
      seq: snap.run.seq,
      problems: [],
      error: null,
      summary: `${before}: nothing to recover`,
    };
  const run = journal.adopt(snap);
  const problems = runProblems(snap.run, snap.effects);
  if (problems.length > 0) {
    await run.toReview(`recovery refused to advance: ${problems.join("; ")}`);
    return {
      ...base,
      after: run.state,
      seq: run.seq,
      problems,
      error: null,
      summary: `NEEDS_REVIEW: ${problems.length} record(s) failed validation; nothing was advanced`,
    };
  }
  const start = new Map(snap.effects.map((e) => [e.key, e.state]));
  let error: string | null = null;
  let cause: unknown;
  try {
    for (const e of snap.effects)
      if (e.state === EffectState.DISPATCHED || e.state === EffectState.ACKNOWLEDGED)
        await settle(run.id, () =>
          advanceEffect(run, e.key, { waitPending: false, dispatchPlanned: false }),
        );
    if (run.state !== RunState.NEEDS_REVIEW)
      for (const e of run.effects)
        if (e.state === EffectState.PLANNED && resendable(journal, e.provider))
          await settle(run.id, () => advanceEffect(run, e.key, { waitPending: false }));
  } catch (err) {
    error = (err as Error).message;
    cause = err;
  }
  if (run.state === RunState.ACTIVE) await run.suspend("recovered after its process died");
  const effects: EffectRecoveryNote[] = [];
  for (const e of run.effects) {
    const from = start.get(e.key)!;
    if (from === e.state) continue;
    effects.push({ key: e.key, from, to: e.state, requestId: e.requestId, seq: e.seq });
    await journal.store.events
      .record(
        run.event(
          EventKind.EffectRecovered,
          `recovery moved effect ${e.key} of run ${run.id} ${from} -> ${e.state}`,
          {
            key: e.key,
            from,
            to: e.state,
            requestId: e.requestId,
            attempt: e.attempt,
          },
        ),
      )
      .catch(() => undefined);
  }
  const moved = effects.map((n) => `${n.key} ${n.from} -> ${n.to}`).join(", ");
  return {
    ...base,
    effects,
    after: run.state,
    seq: run.seq,
    problems: [],
    error,
    ...(error !== null ? { cause } : {}),
    summary:
      `${run.state === RunState.NEEDS_REVIEW ? "NEEDS_REVIEW" : run.state}` +
      (moved ? `: ${moved}` : ": nothing was in flight") +
      (error ? `; stopped early: ${error}` : ""),
  };
}

/**
 * A PLANNED effect whose provider cannot send from the record (a browser submit) stays PLANNED:
 * nothing was sent (DISPATCHED is written first, I8), and the run's code sends it on resume.
 */
function resendable(journal: Journal, provider: string): boolean {
  return journal.providers.get(provider)?.resendFromRecord !== false;
}

/** A quarantine ends the effect's recovery, not the run's. */
async function settle(_runId: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (isQuiesceError(e, "NEEDS_REVIEW")) return;
    throw e;
  }
}
