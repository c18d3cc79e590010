import pg from "pg";

/**
 * PostgreSQL for tests. QUIESCE_TEST_PG_URL names the server (default: the loopback server these
 * machines run). Without a reachable server, PostgreSQL tests are skipped with the reason,
 * except under CI=true, where an unreachable server is a failure: CI must test both backends.
 */
export const PG_URL = process.env.QUIESCE_TEST_PG_URL || "postgres://postgres@127.0.0.1:5432/test";

let probe: Promise<string | null> | undefined;

/** null when reachable, else why not. */
export function pgUnavailable(): Promise<string | null> {
  probe ??= (async () => {
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query("SELECT 1");
      return null;
    } catch (e) {
      return `PostgreSQL at ${PG_URL} is not reachable: ${(e as Error).message}`;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return probe;
}

/** Skip reason for a PostgreSQL test, or false to run it. Throws under CI. */
export async function pgSkip(): Promise<string | false> {
  const why = await pgUnavailable();
  if (why === null) return false;
  if (process.env.CI === "true") throw new Error(`${why} (CI=true: PostgreSQL tests may not skip)`);
  return why;
}

let counter = 0;

/** A store URL in a schema of its own, and a cleanup that drops it. */
export function pgSchemaUrl(tag: string): {
  url: string;
  schema: string;
  drop: () => Promise<void>;
} {
  const schema =
    `qt_${tag.replace(/[^a-z0-9_]/gi, "_").toLowerCase()}_${process.pid}_${counter++}`.slice(0, 60);
  const u = new URL(PG_URL);
  u.searchParams.set("schema", schema);
  return {
    url: u.toString(),
    schema,
    drop: async () => void (await pgExec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)),
  };
}

export async function pgExec(sql: string, params: unknown[] = []): Promise<pg.QueryResultRow[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const r = await client.query<pg.QueryResultRow>(sql, params);
    return r.rows;
  } finally {
    await client.end();
  }
}

/**
 * Counts the named (prepared) statements this process sends to PostgreSQL until `stop()`: a
 * test that means to exercise one statement (a batch, say) asserts that it was sent.
 */
export function countNamedStatements(): { named(name: string): number; stop(): void } {
  const counts = new Map<string, number>();
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its client below
  const original = pg.Client.prototype.query as (this: pg.Client, ...a: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
    const name = (a[0] as { name?: string } | null)?.name;
    if (name !== undefined) counts.set(name, (counts.get(name) ?? 0) + 1);
    return original.apply(this, a);
  } as typeof pg.Client.prototype.query;
  return {
    named: (name) => counts.get(name) ?? 0,
    stop: () => {
      pg.Client.prototype.query = original as typeof pg.Client.prototype.query;
    },
  };
}
