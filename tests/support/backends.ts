import { join } from "node:path";
import Database from "better-sqlite3";
import { pgExec, pgSchemaUrl, pgSkip } from "./pg.js";
import { tempDir } from "./paths.js";

/**
 * One entry per backend. `prepare` gives a fresh, empty store location (a new SQLite file, a
 * new PostgreSQL schema) and its cleanup; `skip` says why a backend cannot run here.
 */
export interface Backend {
  name: "sqlite" | "postgres";
  skip(): Promise<string | false>;
  prepare(tag: string): { url: string; cleanup: () => Promise<void> };
  /** Runs SQL directly against the store location (to tamper with it in tests). */
  rawSql(url: string, sql: string): Promise<void>;
}

export const sqliteBackend: Backend = {
  name: "sqlite",
  skip: () => Promise.resolve(false),
  prepare(tag) {
    const t = tempDir(`quiesce-${tag}-`);
    return { url: join(t.dir, "quiesce.db"), cleanup: () => Promise.resolve(t.cleanup()) };
  },
  rawSql(url, sql) {
    const db = new Database(url);
    try {
      db.exec(sql);
    } finally {
      db.close();
    }
    return Promise.resolve();
  },
};

export const postgresBackend: Backend = {
  name: "postgres",
  skip: pgSkip,
  prepare(tag) {
    const s = pgSchemaUrl(tag);
    return { url: s.url, cleanup: s.drop };
  },
  async rawSql(url, sql) {
    const schema = new URL(url).searchParams.get("schema") ?? "public";
    await pgExec(`SET search_path TO ${schema}; ${sql}`);
  },
};

export const BACKENDS: readonly Backend[] = [sqliteBackend, postgresBackend];
