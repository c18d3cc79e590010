import { ErrorCode, type QuiesceError } from "../domain/errors.js";

/** The exit codes users script against (DESIGN.md, "Command line"). */
export const Exit = {
  OK: 0,
  FAILURE: 1,
  USAGE: 2,
  /** run / lock acquire: the lease could not be obtained; nothing ran. (sysexits EX_TEMPFAIL) */
  LEASE_UNAVAILABLE: 75,
  /** run: the lease was lost while the command ran; lock renew/release, state set: token no longer current. */
  LEASE_LOST: 76,
} as const;

export function exitCodeFor(e: QuiesceError): number {
  switch (e.code) {
    case ErrorCode.INVALID_INPUT:
    case ErrorCode.STORE_INVALID:
    case ErrorCode.SCHEMA_TOO_NEW:
      return Exit.USAGE;
    case ErrorCode.LEASE_HELD:
    case ErrorCode.WORK_REFUSED:
    case ErrorCode.RUN_SUSPENDED:
      return Exit.LEASE_UNAVAILABLE;
    case ErrorCode.LEASE_LOST:
      return Exit.LEASE_LOST;
    case ErrorCode.STORE_UNAVAILABLE:
    case ErrorCode.STORE_MISSING:
    case ErrorCode.INVALID_TRANSITION:
    case ErrorCode.COMMAND_FAILED:
    case ErrorCode.INTERNAL:
    case ErrorCode.NEEDS_REVIEW:
    case ErrorCode.DUPLICATE_EFFECT:
      return Exit.FAILURE;
  }
}

/** Commands that report their own usage errors (check: UNKNOWN, 3, as monitoring plugins do). */
const usageHandlers = new WeakMap<object, (message: string) => number>();

/** `handler` prints what the command prints for a usage error and returns its exit code. */
export function onUsageError(cmd: object, handler: (message: string) => number): void {
  usageHandlers.set(cmd, handler);
}

export function usageErrorHandler(cmd: object): ((message: string) => number) | undefined {
  return usageHandlers.get(cmd);
}
