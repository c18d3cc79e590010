import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ErrorCode, isQuiesceError } from "../domain/errors.js";

/** A response the routes decide on themselves: 400, 401, 403, 404, 413, with one sentence. */
export class HttpError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const notFound = (message: string, extra: Record<string, unknown> = {}) =>
  new HttpError(404, message, extra);
export const badRequest = (message: string) => new HttpError(400, message);

/** How the library's errors map to HTTP: bad input 400, contention 409, the store down 503. */
export function statusFor(code: ErrorCode): ContentfulStatusCode {
  switch (code) {
    case ErrorCode.INVALID_INPUT:
      return 400;
    case ErrorCode.LEASE_HELD:
    case ErrorCode.LEASE_LOST:
    case ErrorCode.WORK_REFUSED:
    case ErrorCode.INVALID_TRANSITION:
    case ErrorCode.NEEDS_REVIEW:
    case ErrorCode.DUPLICATE_EFFECT:
    case ErrorCode.RUN_SUSPENDED:
      return 409;
    case ErrorCode.STORE_UNAVAILABLE:
    case ErrorCode.STORE_MISSING:
      return 503;
    case ErrorCode.STORE_INVALID:
    case ErrorCode.SCHEMA_TOO_NEW:
    case ErrorCode.COMMAND_FAILED:
    case ErrorCode.INTERNAL:
      return 500;
  }
}

/** Belt and braces: whatever a driver put in a message, a URL's password never leaves. */
export function scrubSecrets(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)[^@\s]*@/gi, "$1***@");
}

/** Every error becomes JSON with one sentence; a stack never reaches the client. */
export function errorResponse(c: Context, e: unknown): Response {
  if (e instanceof HttpError)
    return c.json({ error: scrubSecrets(e.message), ...e.extra }, e.status);
  if (isQuiesceError(e))
    return c.json({ error: scrubSecrets(e.message), code: e.code }, statusFor(e.code));
  process.stderr.write(
    `quiesce serve: internal error on ${c.req.method} ${c.req.path}: ${(e as Error)?.stack ?? String(e)}\n`,
  );
  return c.json({ error: "internal error (the server's log has the details)" }, 500);
}
