import { assertTransition, type EffectCause, type EffectState } from "../domain/effect-state.js";
import type { EventInput } from "../domain/event.js";
import {
  contentOf,
  sealEffect,
  type EffectContent,
  type RunState,
} from "../domain/journal-record.js";
import type { SealedEffect } from "../store/journal-store.js";

/** One effect write: the new record, and optionally the run's new state and an event. */
export interface EffectChange {
  effect: SealedEffect;
  run?: { state: RunState; reviewReason: string | null };
  event?: EventInput;
}

export type EffectPatch = Partial<
  Pick<EffectContent, "attempt" | "requestId" | "result" | "reviewReason" | "context">
>;

/**
 * The next record of an effect: the state machine must allow `cur.state -> to` for `cause`
 * (INVALID_TRANSITION otherwise), and the result is sealed with a fresh checksum.
 */
export function nextEffect(
  cur: SealedEffect,
  to: EffectState,
  cause: EffectCause,
  patch: EffectPatch,
  seq: number,
  token: number,
): SealedEffect {
  assertTransition(cur.key, cur.state, to, cause);
  return sealEffect({ ...contentOf(cur), ...patch, state: to, prevState: cur.state, seq, token });
}
