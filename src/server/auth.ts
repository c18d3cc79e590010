import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { HttpError } from "./http-errors.js";

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/**
 * Operator actions need `Authorization: Bearer <token>`. The comparison runs on SHA-256 digests
 * with timingSafeEqual, so neither the token's content nor its length leaks through timing.
 * No cookies are ever set or read: a browser never sends the token by itself, so there is no
 * cross-site request to forge. A server started without a token is read-only.
 */
export function requireToken(token: string | null): MiddlewareHandler {
  const expected = token === null ? null : digest(token);
  return async (c, next) => {
    if (expected === null)
      throw new HttpError(
        403,
        "this server is read-only: start quiesce serve with --token-file to allow operator actions",
      );
    const header = c.req.header("authorization");
    const m = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) {
      c.header("WWW-Authenticate", 'Bearer realm="quiesce"');
      throw new HttpError(401, "operator actions need an Authorization: Bearer <token> header");
    }
    if (!timingSafeEqual(digest(m[1]!), expected))
      throw new HttpError(403, "the token is not this server's operator token");
    await next();
  };
}
