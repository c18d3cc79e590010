import { EffectState } from "./effect-state.js";

/** What a provider declares it can do (the recovery rules below depend on nothing else). */
export interface ProviderCapabilities {
  /** The provider honours the idempotency key: a second request with it does nothing new. */
  idempotencyKey: boolean;
  /** The provider answers "what happened to KEY?" (absent / acknowledged / observed). */
  statusLookup: boolean;
}

/**
 * What recovery (or a live run whose dispatch failed in an unknown way) does with one effect
 * (I9). `null` capabilities: no provider of that name is registered in this process.
 */
export type EffectDecision =
  | { action: "done"; why: string }
  | { action: "wait_review"; why: string }
  | { action: "dispatch"; why: string }
  | { action: "lookup"; why: string }
  | { action: "redispatch"; why: string }
  | { action: "finish_from_record"; why: string }
  | { action: "quarantine"; why: string }
  | { action: "blocked"; why: string };

export function classifyEffect(
  state: EffectState,
  caps: ProviderCapabilities | null,
  hasRecordedResult: boolean,
): EffectDecision {
  switch (state) {
    case EffectState.OBSERVED:
      return { action: "done", why: "OBSERVED: complete, never replayed" };
    case EffectState.NEEDS_REVIEW:
      return { action: "wait_review", why: "quarantined: waits for `quiesce runs resolve`" };
    case EffectState.PLANNED:
      if (caps === null)
        return { action: "blocked", why: "PLANNED, but no provider is registered to send it" };
      return { action: "dispatch", why: "PLANNED: never sent, dispatch again" };
    case EffectState.DISPATCHED:
      if (caps?.statusLookup)
        return {
          action: "lookup",
          why: "DISPATCHED without an acknowledgement: look it up by key",
        };
      if (caps?.idempotencyKey)
        return {
          action: "redispatch",
          why: "DISPATCHED without an acknowledgement: the provider honours the key, send again with it",
        };
      return {
        action: "quarantine",
        why:
          caps === null
            ? "DISPATCHED without an acknowledgement and no provider registered to look it up"
            : "DISPATCHED without an acknowledgement; the provider has no status lookup and does not honour idempotency keys, so it may or may not have landed",
      };
    case EffectState.ACKNOWLEDGED:
      if (caps?.statusLookup)
        return { action: "lookup", why: "ACKNOWLEDGED: reconcile by reading the provider's state" };
      if (hasRecordedResult)
        return {
          action: "finish_from_record",
          why: "ACKNOWLEDGED with its result recorded: complete it",
        };
      return {
        action: "quarantine",
        why: "ACKNOWLEDGED, but its outcome is neither recorded nor readable from the provider",
      };
  }
}

/** What a status lookup said about a key. */
export type LookupAnswer =
  | { status: "absent" }
  | { status: "acknowledged"; requestId: string | null }
  | { status: "observed"; requestId: string | null; result: unknown };

/** The transitions a lookup answer allows from the effect's state, in order. */
export interface LookupOutcome {
  /** Transitions to write, in order; empty: nothing changes. */
  steps: EffectState[];
  why: string;
}

export function applyLookup(state: EffectState, answer: LookupAnswer): LookupOutcome {
  const { PLANNED, ACKNOWLEDGED, OBSERVED, NEEDS_REVIEW, DISPATCHED } = EffectState;
  if (state === DISPATCHED) {
    switch (answer.status) {
      case "absent":
        return { steps: [PLANNED], why: "the provider has no record of the key: it never landed" };
      case "acknowledged":
        return { steps: [ACKNOWLEDGED], why: "the provider has it, outcome pending" };
      case "observed":
        return { steps: [ACKNOWLEDGED, OBSERVED], why: "the provider has it and its result" };
    }
  }
  if (state === ACKNOWLEDGED) {
    switch (answer.status) {
      case "absent":
        return {
          steps: [NEEDS_REVIEW],
          why: "the provider acknowledged this key but now has no record of it",
        };
      case "acknowledged":
        return { steps: [], why: "the provider has it, outcome still pending" };
      case "observed":
        return { steps: [OBSERVED], why: "the provider reports its result" };
    }
  }
  return { steps: [], why: `nothing to look up in state ${state}` };
}
