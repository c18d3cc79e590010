import { ErrorCode, QuiesceError } from "../../domain/errors.js";

// Apart from pg-connection.ts so that reading a URL does not load the driver (start-up time).

export interface PgTarget {
  /** The connection string handed to node-postgres (without our `schema` parameter). */
  connectionString: string;
  /** The schema quiesce's tables live in; `public` unless the URL says `?schema=NAME`. */
  schema: string;
  /** The URL with any password removed, for messages and `store info`. */
  display: string;
}

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * `postgres://user@127.0.0.1:5432/db?schema=quiesce` -> connection string + schema.
 *
 * Only our own `schema` parameter is taken out; everything else goes to node-postgres as
 * written (WHATWG URL parsing would refuse forms the driver accepts, such as a Unix socket:
 * `postgres://user@/db?host=/run/postgresql`).
 */
export function parsePgUrl(url: string): PgTarget {
  if (!/^postgres(ql)?:\/\/[^\s]*$/i.test(url)) {
    throw new QuiesceError(
      ErrorCode.INVALID_INPUT,
      "--store: not a valid PostgreSQL URL (expected postgres://user@host:port/database)",
    );
  }
  const q = url.indexOf("?");
  const base = q === -1 ? url : url.slice(0, q);
  const params = new URLSearchParams(q === -1 ? "" : url.slice(q + 1));
  const schema = params.get("schema") ?? "public";
  if (!SCHEMA.test(schema)) {
    throw new QuiesceError(
      ErrorCode.INVALID_INPUT,
      `--store: schema "${schema}" is not a valid schema name (lowercase letters, digits, _)`,
    );
  }
  params.delete("schema");
  const rest = params.toString();
  const connectionString = rest === "" ? base : `${base}?${rest}`;
  const shown = new URLSearchParams(params);
  if (shown.has("password")) shown.set("password", "***");
  const shownRest = shown.toString().replace("password=%2A%2A%2A", "password=***");
  return {
    connectionString,
    schema,
    display: redactUserinfo(base) + (shownRest === "" ? "" : `?${shownRest}`),
  };
}

/** Hides the password of `scheme://user:password@host...`, even one containing @ or /. */
function redactUserinfo(base: string): string {
  const start = base.indexOf("//") + 2;
  const at = base.lastIndexOf("@");
  if (at < start) return base;
  const userinfo = base.slice(start, at);
  const colon = userinfo.indexOf(":");
  if (colon === -1) return base;
  return `${base.slice(0, start)}${userinfo.slice(0, colon)}:***${base.slice(at)}`;
}
