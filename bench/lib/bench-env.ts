import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/**
 * The schema every PostgreSQL part of this bench process works in; dropped at the end. Named
 * after the process, so that two benchmarks running at once (serve and lease-cycle both use
 * this) never drop each other's tables.
 */
export const PG_SCHEMA = `quiesce_bench_${process.pid}`;

/** The store URL for the bench schema on `serverUrl`. */
export function pgStoreUrl(serverUrl: string): string {
  const u = new URL(serverUrl);
  u.searchParams.set("schema", PG_SCHEMA);
  return u.toString();
}

/**
 * What a bare node-postgres client needs to reach the store at `storeUrl`: the URL without its
 * `?schema=`, that schema as the search path. For the references that send our SQL by hand.
 */
export function pgClientConfig(
  storeUrl: string,
  applicationName?: string,
): { config: pg.ClientConfig; schema: string } {
  const u = new URL(storeUrl);
  const schema = u.searchParams.get("schema") ?? "public";
  u.searchParams.delete("schema");
  return {
    schema,
    config: {
      connectionString: u.toString(),
      options: `-c search_path=${schema}`,
      application_name: applicationName,
    },
  };
}

export async function pgQuery<R extends pg.QueryResultRow>(
  serverUrl: string,
  text: string,
): Promise<R[]> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

/** null when the server answers, else why not. */
export async function pgUnreachable(serverUrl: string): Promise<string | null> {
  try {
    await pgQuery(serverUrl, "SELECT 1");
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

export async function dropPgSchema(serverUrl: string): Promise<void> {
  await pgQuery(serverUrl, `DROP SCHEMA IF EXISTS ${PG_SCHEMA} CASCADE`);
}

export interface WalStats {
  walSync: number;
  walBytes: number;
}

/** Server-wide WAL counters (PostgreSQL 14+). A backend reports its share when it exits, or
 * when it goes idle at least a second after its last report. */
export async function walStats(serverUrl: string): Promise<WalStats> {
  const [r] = await pgQuery<{ wal_sync: string; wal_bytes: string }>(
    serverUrl,
    "SELECT wal_sync, wal_bytes FROM pg_stat_wal",
  );
  return { walSync: Number(r?.wal_sync ?? NaN), walBytes: Number(r?.wal_bytes ?? NaN) };
}

/** A temp directory on the disk of /tmp for SQLite files, lock files and the fsync probe. */
export function benchDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "quiesce-bench-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
