import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
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
  /**
   * SIGSTOPs `pid` at a moment it holds no write lock on the store. A process frozen inside a
   * write transaction (a renewal) blocks every other writer of a SQLite file, and holds its row
   * locks on PostgreSQL: that is the store being unavailable, not the stopped owner these tests
   * are about. Stopped at such a moment, it is let go for a few milliseconds and stopped again.
   */
  stopOutsideWrite(url: string, pid: number): Promise<void>;
}

async function stopWhen(pid: number, holdsWriteLock: () => Promise<boolean>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    process.kill(pid, "SIGSTOP");
    while (!isStopped(pid)) await sleep(1);
    // Another process's short write can look the same: a retry is then all it costs.
    if (attempt >= 50 || !(await holdsWriteLock())) return;
    process.kill(pid, "SIGCONT");
    await sleep(3 + (attempt % 10));
  }
}

function isStopped(pid: number): boolean {
  // /proc/PID/stat: "pid (comm) S ...": the state follows the last ")".
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).startsWith("T");
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
  stopOutsideWrite(url, pid) {
    return stopWhen(pid, () => {
      const db = new Database(url, { timeout: 0 });
      try {
        db.exec("BEGIN IMMEDIATE");
        db.exec("ROLLBACK");
        return Promise.resolve(false);
      } catch (e) {
        if ((e as { code?: string }).code === "SQLITE_BUSY") return Promise.resolve(true);
        throw e;
      } finally {
        db.close();
      }
    });
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
  stopOutsideWrite(_url, pid) {
    // quiesce names its connections "quiesce HOST:PID" (pg-connection.ts).
    const name = `quiesce ${hostname()}:${pid}`.slice(0, 63);
    return stopWhen(pid, async () => {
      await sleep(20); // a statement already sent finishes (and, alone, commits) on the server
      const rows = await pgExec(
        "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND state LIKE 'idle in transaction%'",
        [name],
      );
      return rows.length > 0;
    });
  },
};

export const BACKENDS: readonly Backend[] = [sqliteBackend, postgresBackend];
