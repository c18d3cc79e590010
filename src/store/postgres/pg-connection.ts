import { hostname } from "node:os";
import pg from "pg";
import type { PgTarget } from "./pg-url.js";
import { ErrorCode, QuiesceError } from "../../domain/errors.js";

export { parsePgUrl, type PgTarget } from "./pg-url.js";

const INT8 = 20;

/** What every connection of ours is opened with (the pool's and the LISTEN connection). */
export function clientConfig(target: PgTarget): pg.ClientConfig {
  return {
    connectionString: target.connectionString,
    connectionTimeoutMillis: 5_000,
    query_timeout: 15_000,
    // Names the agent in pg_stat_activity, so an operator (or a test) can find its sessions.
    application_name: `quiesce ${hostname()}:${process.pid}`.slice(0, 63),
    options: `-c search_path=${target.schema}`,
  };
}

/**
 * A small pool: the heartbeat keeper must get a connection even while other queries run.
 * bigint columns (tokens, epoch ms) are parsed to numbers: they stay far below 2^53.
 * An idle connection killed by the server (pg_terminate_backend, a restart) emits 'error' on
 * the pool; the pool drops it and the next query gets a fresh one, so the handler only has to
 * keep the process alive.
 */
export function createPool(target: PgTarget): pg.Pool {
  const pool = new pg.Pool({
    ...clientConfig(target),
    max: 4,
    idleTimeoutMillis: 10_000,
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary"): unknown =>
        oid === INT8
          ? (v: string) => Number(v)
          : (pg.types.getTypeParser(oid, format) as unknown)) as typeof pg.types.getTypeParser,
    },
  });
  pool.on("error", () => {
    /* an idle client died; the pool replaces it on the next query */
  });
  // A new connection is handed to its caller from inside the read that brought its
  // ReadyForQuery, and the caller's own error listener (onBorrowed) comes a moment later. If the
  // server ended the session in that same read (pg_terminate_backend as it connects), the
  // connection's 'error' would have no listener and crash the process. This one stays for the
  // connection's life; the error itself is not lost: the connection is no longer queryable, so
  // the caller's statement fails as a store error and the pool drops it when it comes back.
  pool.on("connect", (client) => client.on("error", () => undefined));
  return pool;
}

/**
 * Errors that say the connection or the server went away, not that the request was wrong: a
 * dropped or terminated connection (pg_terminate_backend, a restart), a server starting up or
 * shutting down, too many connections. A caller with time left (a waiter) retries these.
 */
export function isTransientPgError(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  if (typeof code !== "string") return true; // node-postgres' own connection errors carry none
  if (NETWORK_CODES.includes(code)) return true;
  return code.startsWith("08") || ["57P01", "57P02", "57P03", "53300"].includes(code);
}

const NETWORK_CODES = [
  "ECONNREFUSED",
  "ENOTFOUND",
  "ETIMEDOUT",
  "ECONNRESET",
  "EHOSTUNREACH",
  "EAI_AGAIN",
  "EPIPE",
];

/**
 * Errors that come before a statement can reach the server: no connection was made (refused,
 * no such host, the server starting up or full). Whatever was to be sent was not, so a write
 * may be sent again as it was. A connection lost mid-statement is not one of these: the
 * statement may have committed.
 */
export function isUnsentPgError(e: unknown): boolean {
  const err = e as { code?: unknown; syscall?: unknown };
  if (err?.syscall === "connect" || err?.syscall === "getaddrinfo") return true;
  return typeof err?.code === "string" && UNSENT_CODES.includes(err.code);
}

const UNSENT_CODES = ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "57P03", "53300"];

/**
 * Maps a node-postgres error to one sentence naming the store. `unsent`: the caller knows the
 * error came while connecting (pool.connect()), before anything was sent.
 */
export function pgError(
  e: unknown,
  display: string,
  doing: string,
  o: { unsent?: boolean } = {},
): QuiesceError {
  if (e instanceof QuiesceError) return e;
  const err = e as Error & { code?: string };
  const transient = isTransientPgError(e);
  const unsent = transient && (o.unsent === true || isUnsentPgError(e));
  if (err.code !== undefined && NETWORK_CODES.includes(err.code)) {
    return new QuiesceError(
      ErrorCode.STORE_UNAVAILABLE,
      `cannot reach the PostgreSQL store ${display}: ${err.message}`,
      { cause: e, details: { transient, unsent } },
    );
  }
  if (err.code === "3D000" || err.code === "28P01" || err.code === "28000") {
    return new QuiesceError(
      ErrorCode.STORE_UNAVAILABLE,
      `cannot use the PostgreSQL store ${display}: ${err.message}`,
      {
        cause: e,
      },
    );
  }
  return new QuiesceError(
    ErrorCode.STORE_UNAVAILABLE,
    `the PostgreSQL store ${display} failed to ${doing}: ${err.message}`,
    { cause: e, details: { transient, unsent } },
  );
}
