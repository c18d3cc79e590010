import type pg from "pg";
import { randomUuid } from "../../process/random-uuid.js";
import { ErrorCode, QuiesceError, storeMissing } from "../../domain/errors.js";
import { migrations } from "./migrations.generated.js";
import { onBorrowed } from "./pg-tx.js";

export const LATEST_PG_SCHEMA = migrations.length;

/**
 * Brings the schema up to date. Safe when many agents start at once: a transaction-scoped
 * advisory lock (keyed by schema) lets one migrate while the others wait and then find the
 * work done. A schema newer than this binary is refused, never "downgraded".
 */
export async function migratePg(pool: pg.Pool, schema: string, display: string): Promise<number> {
  const current = await readVersion(pool);
  if (current !== null) checkNotTooNew(current, display);
  if (current === LATEST_PG_SCHEMA) return current;
  const client = await pool.connect();
  return onBorrowed(client, async () => {
    try {
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
        `quiesce.migrate.${schema}`,
      ]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(
        "CREATE TABLE IF NOT EXISTS quiesce_meta (key text PRIMARY KEY, value text NOT NULL)",
      );
      const r = await client.query<{ value: string }>(
        "SELECT value FROM quiesce_meta WHERE key = 'schema_version'",
      );
      const version = Number(r.rows[0]?.value ?? 0);
      checkNotTooNew(version, display);
      for (const m of migrations) {
        if (m.version > version) await client.query(m.sql);
      }
      await client.query(
        "INSERT INTO quiesce_meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [String(LATEST_PG_SCHEMA)],
      );
      await client.query(
        "INSERT INTO quiesce_meta (key, value) VALUES ('store_id', $1) ON CONFLICT DO NOTHING",
        [randomUuid()],
      );
      await client.query("COMMIT");
      return LATEST_PG_SCHEMA;
    } catch (e) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw e;
    }
  });
}

/**
 * For read-only commands (a role with SELECT only): the store must exist with this binary's
 * schema; a missing one is reported, never created, and an older one is left to a writer.
 */
export async function checkReadable(pool: pg.Pool, display: string): Promise<void> {
  const version = await readVersion(pool);
  if (version === null || version === 0) throw storeMissing(display);
  checkNotTooNew(version, display);
  if (version < LATEST_PG_SCHEMA) {
    throw new QuiesceError(
      ErrorCode.STORE_UNAVAILABLE,
      `the store ${display} has schema version ${version}, older than this quiesce (${LATEST_PG_SCHEMA}); run \`quiesce store migrate\` as a role that can write it`,
    );
  }
}

/** null when the schema or the meta table does not exist yet. */
export async function readVersion(pool: pg.Pool): Promise<number | null> {
  try {
    const r = await pool.query<{ value: string }>(
      "SELECT value FROM quiesce_meta WHERE key = 'schema_version'",
    );
    return Number(r.rows[0]?.value ?? 0);
  } catch (e) {
    if ((e as { code?: string }).code === "42P01") return null; // undefined_table
    throw e;
  }
}

function checkNotTooNew(version: number, display: string): void {
  if (version > LATEST_PG_SCHEMA) {
    throw new QuiesceError(
      ErrorCode.SCHEMA_TOO_NEW,
      `the store ${display} has schema version ${version}, newer than this quiesce understands (${LATEST_PG_SCHEMA}); upgrade quiesce`,
      { details: { version, supported: LATEST_PG_SCHEMA } },
    );
  }
}
