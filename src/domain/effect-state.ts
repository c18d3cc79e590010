import { ErrorCode, QuiesceError } from "./errors.js";

/**
 * The life of one side effect, per idempotency key within a run (DESIGN.md, "State machines").
 * Each state is committed before the action it permits (I8): DISPATCHED is durable before the
 * request leaves, so a restart can always tell "maybe sent" from "surely not sent".
 */
export const EffectState = {
  /** Recorded with its request; not sent. May be dispatched (again). */
  PLANNED: "PLANNED",
  /** About to leave or left; no acknowledgement recorded. Landed or not: unknown. */
  DISPATCHED: "DISPATCHED",
  /** The provider accepted it (request id recorded); its outcome may still be pending. */
  ACKNOWLEDGED: "ACKNOWLEDGED",
  /** Complete: the result the run uses next is recorded. Never replayed. */
  OBSERVED: "OBSERVED",
  /** Quarantined: nothing may happen to it until a human resolves it (`runs resolve`). */
  NEEDS_REVIEW: "NEEDS_REVIEW",
} as const;
export type EffectState = (typeof EffectState)[keyof typeof EffectState];

export const EFFECT_STATES: readonly EffectState[] = Object.values(EffectState);

/** Why a transition happens; each legal edge names the causes that may take it. */
export const EffectCause = {
  /** The normal forward step of a live run. */
  Progress: "progress",
  /** Recovery or an in-process retry re-sends with the same key (idempotent provider). */
  Redispatch: "redispatch",
  /** A status lookup by key settled what happened. */
  Lookup: "lookup",
  /** Nobody can tell whether it landed: quarantine. */
  Quarantine: "quarantine",
  /** A human reconciled it (`runs resolve`). */
  Resolution: "resolution",
} as const;
export type EffectCause = (typeof EffectCause)[keyof typeof EffectCause];

const { PLANNED, DISPATCHED, ACKNOWLEDGED, OBSERVED, NEEDS_REVIEW } = EffectState;
const { Progress, Redispatch, Lookup, Quarantine, Resolution } = EffectCause;

/**
 * Every legal edge and the causes allowed to take it. Anything not listed is impossible:
 * OBSERVED has no way out (I9: never replayed), and nothing skips DISPATCHED on the way out.
 * A missing `from` (null) is the creation of the record, which is always PLANNED.
 */
const EDGES: Readonly<Record<string, readonly EffectCause[]>> = {
  [`${PLANNED}>${DISPATCHED}`]: [Progress, Redispatch],
  [`${DISPATCHED}>${DISPATCHED}`]: [Redispatch],
  [`${DISPATCHED}>${ACKNOWLEDGED}`]: [Progress, Lookup],
  [`${DISPATCHED}>${PLANNED}`]: [Lookup],
  [`${DISPATCHED}>${NEEDS_REVIEW}`]: [Quarantine],
  [`${ACKNOWLEDGED}>${OBSERVED}`]: [Progress, Lookup],
  [`${ACKNOWLEDGED}>${NEEDS_REVIEW}`]: [Quarantine],
  [`${NEEDS_REVIEW}>${OBSERVED}`]: [Resolution],
  [`${NEEDS_REVIEW}>${PLANNED}`]: [Resolution],
};

export function isEffectState(s: unknown): s is EffectState {
  return typeof s === "string" && (EFFECT_STATES as readonly string[]).includes(s);
}

/** Is `from -> to` legal for `cause`? `from` null: the record is being created. */
export function canTransition(
  from: EffectState | null,
  to: EffectState,
  cause: EffectCause,
): boolean {
  if (from === null) return to === PLANNED && cause === Progress;
  return EDGES[`${from}>${to}`]?.includes(cause) ?? false;
}

/** Is `from -> to` legal for some cause? (What validation of a stored record can check.) */
export function isLegalEdge(from: EffectState | null, to: EffectState): boolean {
  if (from === null) return to === PLANNED;
  return EDGES[`${from}>${to}`] !== undefined;
}

export function assertTransition(
  key: string,
  from: EffectState | null,
  to: EffectState,
  cause: EffectCause,
): void {
  if (canTransition(from, to, cause)) return;
  throw new QuiesceError(
    ErrorCode.INVALID_TRANSITION,
    `effect ${key}: ${from ?? "(new)"} -> ${to} is not a legal transition (${cause})`,
    { details: { key, from, to, cause } },
  );
}

/** A side effect whose outcome nobody has classified: it may or may not have landed. */
export function isUnclassified(state: EffectState): boolean {
  return state === DISPATCHED;
}

/** Nothing more will happen to it without a human. */
export function isSettled(state: EffectState): boolean {
  return state === OBSERVED || state === NEEDS_REVIEW;
}
