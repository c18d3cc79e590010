/**
 * One error type for the whole library. `code` is what callers branch on; `message` is a
 * sentence a user can act on; `cause` keeps the underlying driver error for QUIESCE_DEBUG.
 */
export const ErrorCode = {
  /** Bad flag, duration, scope name or other input: exit 2. */
  INVALID_INPUT: "INVALID_INPUT",
  /** The lease is held by someone else (or the queue is ahead of us). */
  LEASE_HELD: "LEASE_HELD",
  /** Our lease is gone: expired, taken over or released; a fenced write or release was refused. */
  LEASE_LOST: "LEASE_LOST",
  /** The store could not be reached or answered with an I/O error: exit 1. */
  STORE_UNAVAILABLE: "STORE_UNAVAILABLE",
  /** A read-only command found no store where it was pointed (nothing is created): exit 1. */
  STORE_MISSING: "STORE_MISSING",
  /** The store file or schema is not something this binary can use: exit 2. */
  STORE_INVALID: "STORE_INVALID",
  /** The store's schema was written by a newer quiesce: exit 2. */
  SCHEMA_TOO_NEW: "SCHEMA_TOO_NEW",
  /** A state machine refused a transition. */
  INVALID_TRANSITION: "INVALID_TRANSITION",
  /** The command quiesce was asked to run could not be started. */
  COMMAND_FAILED: "COMMAND_FAILED",
  /** Anything we did not expect: a bug. */
  INTERNAL: "INTERNAL",
  /** A runtime that is draining or stopped refused new work (a run). */
  WORK_REFUSED: "WORK_REFUSED",
  /** A drain stopped the run at a checkpoint; it resumes in the next process. */
  RUN_SUSPENDED: "RUN_SUSPENDED",
  /** The run or effect is quarantined until a human resolves it (`quiesce runs resolve`). */
  NEEDS_REVIEW: "NEEDS_REVIEW",
  /** An idempotency key was planned twice in one run. */
  DUPLICATE_EFFECT: "DUPLICATE_EFFECT",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export class QuiesceError extends Error {
  readonly code: ErrorCode;
  /** Structured facts for `--json` output and events (holder, token, scope, ...). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "QuiesceError";
    this.code = code;
    this.details = options.details ?? {};
  }
}

export function isQuiesceError(e: unknown, code?: ErrorCode): e is QuiesceError {
  return e instanceof QuiesceError && (code === undefined || e.code === code);
}

export function invalidInput(message: string, details?: Record<string, unknown>): QuiesceError {
  return new QuiesceError(ErrorCode.INVALID_INPUT, message, details ? { details } : {});
}

/**
 * The store could not be reached for a reason that may pass (a dropped connection, a server
 * restarting): a caller with time left may retry. Anything else is final.
 */
export function isTransientStoreError(e: unknown): boolean {
  return isQuiesceError(e, ErrorCode.STORE_UNAVAILABLE) && e.details.transient === true;
}

/**
 * A transient store error that came before the request reached the server (no connection
 * could be made: refused, a server still starting, too many connections). Nothing was
 * written, so any write, also one that is not idempotent, may be sent again as it was.
 */
export function isUnsentStoreError(e: unknown): boolean {
  return isTransientStoreError(e) && (e as QuiesceError).details.unsent === true;
}

/** What read-only commands say instead of creating a store (a typo must not look healthy). */
export function storeMissing(location: string): QuiesceError {
  return new QuiesceError(
    ErrorCode.STORE_MISSING,
    `no quiesce store at ${location}; quiesce creates it on first write`,
    { details: { location } },
  );
}
