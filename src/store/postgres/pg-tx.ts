import type pg from "pg";
import type { EventInput } from "../../domain/event.js";
import { pgError } from "./pg-connection.js";
import { INSERT_EVENT } from "./pg-statements.js";

/** Statement text -> name, for the hot paths (see `prepareNamed`). */
const NAMED = new Map<string, string>();

/**
 * Marks statements as named prepared statements: parsed and planned once per connection, then
 * only bound and executed. For the hot paths only (each name costs a little server memory per
 * connection); the text is the key, so no call site can pair a name with the wrong text.
 */
export function prepareNamed(statements: Record<string, string>): void {
  for (const [name, text] of Object.entries(statements)) NAMED.set(text, `quiesce_${name}`);
}

function queryConfig(text: string, values: unknown[], name?: string): pg.QueryConfig {
  const n = name ?? NAMED.get(text);
  return n ? { name: n, text, values } : { text, values };
}

/** A statement on the transaction's connection; `name` makes it a named prepared statement. */
export type Query = <R extends pg.QueryResultRow>(
  text: string,
  params?: unknown[],
  name?: string,
) => Promise<R[]>;

/**
 * Runs `fn` in one transaction on one pooled connection (one WAL flush for all it writes) and
 * rolls back on any error; a driver error becomes one sentence naming the server and what was
 * being done. Every store area (journal, waves) writes through this.
 */
export function inTransaction<T>(
  pool: pg.Pool,
  location: string,
  doing: string,
  fn: (q: Query) => Promise<T>,
): Promise<T> {
  return onConnection(pool, location, doing, async (q) => {
    await q("BEGIN");
    try {
      const out = await fn(q);
      await q("COMMIT");
      return out;
    } catch (e) {
      await q("ROLLBACK").catch(() => undefined);
      throw e;
    }
  });
}

/**
 * Runs `fn` on one pooled connection with no transaction around it: each statement commits by
 * itself. For a sequence of writes that need not commit together (each one atomic on its own),
 * it saves the BEGIN and COMMIT round trips; a driver error becomes one sentence, as above.
 */
export function onConnection<T>(
  pool: pg.Pool,
  location: string,
  doing: string,
  fn: (q: Query) => Promise<T>,
): Promise<T> {
  return withClient(pool, location, doing, (client) =>
    fn(
      async <R extends pg.QueryResultRow>(text: string, params: unknown[] = [], name?: string) =>
        (await client.query<R>(queryConfig(text, params, name))).rows,
    ),
  );
}

/**
 * One statement on any pooled connection (its own transaction). With `name`, a named prepared
 * statement (also when the text was given to `prepareNamed`).
 */
export function readRows<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  location: string,
  doing: string,
  text: string,
  params: unknown[] = [],
  name?: string,
): Promise<R[]> {
  return withClient(
    pool,
    location,
    doing,
    async (client) => (await client.query<R>(queryConfig(text, params, name))).rows,
  );
}

/** readRows with each row as an array of its columns, in the statement's order: for listings,
 * where building an object per row costs more than the query. */
export function readArrays<R extends unknown[]>(
  pool: pg.Pool,
  location: string,
  doing: string,
  text: string,
): Promise<R[]> {
  return withClient(
    pool,
    location,
    doing,
    async (client) => (await client.query<R>({ text, rowMode: "array" })).rows,
  );
}

/**
 * Takes a pooled connection, runs `fn` on it and gives it back; a driver error becomes one
 * sentence. The connection is taken first (as pool.query would) so that a failure to connect,
 * when nothing was sent, is told apart from a failure mid-statement (see isUnsentPgError).
 */
async function withClient<T>(
  pool: pg.Pool,
  location: string,
  doing: string,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (e) {
    throw pgError(e, location, doing, { unsent: true });
  }
  try {
    return await onBorrowed(client, fn);
  } catch (e) {
    throw pgError(e, location, doing);
  }
}

/**
 * Runs `fn` on a connection taken from the pool and gives it back, as pool.query does for one
 * statement: while it is out, the connection's own "error" (the server ended it between two
 * statements) is caught, not left to crash the process; and a connection that failed is
 * closed, not put back, so that one the server terminated (its error may come before the
 * socket's end) is never handed out again.
 */
export async function onBorrowed<T>(
  client: pg.PoolClient,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  let broken: Error | null = null;
  const onError = (e: Error) => (broken ??= e);
  client.on("error", onError);
  try {
    return await fn(client);
  } catch (e) {
    broken ??= e instanceof Error ? e : new Error(String(e));
    throw e;
  } finally {
    client.removeListener("error", onError);
    client.release(broken ?? undefined);
  }
}

/** An event, in the transaction of the change it records. */
export async function insertEvent(q: Query, e: EventInput): Promise<void> {
  await q(INSERT_EVENT, eventValues(e));
}

/** The parameters of INSERT_EVENT. */
export function eventValues(e: EventInput): unknown[] {
  return [
    e.kind,
    e.scope,
    e.token,
    e.runId,
    e.host,
    e.pid,
    e.message,
    JSON.stringify(e.detail ?? {}),
  ];
}
