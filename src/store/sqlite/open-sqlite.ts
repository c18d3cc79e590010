import Database from "better-sqlite3";
import { randomUuid } from "../../process/random-uuid.js";
import { closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { ErrorCode, QuiesceError } from "../../domain/errors.js";
import { isBusy, sleepSync } from "./busy-wait.js";
import { migrations } from "./migrations.generated.js";
import { startupMark } from "../../process/startup-marks.js";

export const LATEST_SQLITE_SCHEMA = migrations.length;

export interface SqliteOptions {
  /** How long a writer waits for another process's write transaction (ms). */
  busyTimeoutMs?: number;
  /** Open an existing store for reading only: never create or migrate (open-sqlite-readonly.ts). */
  readOnly?: boolean;
}

/**
 * Opens (creating if needed) a SQLite store file and brings its schema up to date.
 *
 * The file is created with mode 0600 before SQLite touches it: it names hosts, pids and
 * commands, and SQLite gives its -wal and -shm files the main file's mode.
 * WAL with synchronous=FULL set AFTER the switch to WAL: better-sqlite3 is compiled so that
 * entering WAL silently drops to NORMAL (no fsync per commit) while `PRAGMA synchronous` still
 * reports FULL. tests/unit/store/sqlite-durability.test.ts counts the fsyncs to prove it.
 */
export function openSqlite(path: string, options: SqliteOptions = {}): Database.Database {
  if (path !== ":memory:") createPrivateFile(path);
  const timeout = options.busyTimeoutMs ?? 10_000;
  const deadline = Date.now() + timeout;
  for (let attempt = 1; ; attempt++) {
    try {
      return openOnce(path, timeout);
    } catch (e) {
      // Many processes opening a new file at once: SQLite answers "database is locked" in a
      // few places without waiting on the busy timeout (seen once in CI: 20 racers on a fresh
      // store). Opening is idempotent, so try again, with jitter, until the timeout is spent.
      if (isBusy(e) && Date.now() < deadline) {
        sleepSync(Math.min(100, 10 * attempt) * (0.5 + Math.random()));
        continue;
      }
      throw e instanceof QuiesceError ? e : sqliteError(e, path, "open");
    }
  }
}

function openOnce(path: string, timeoutMs: number): Database.Database {
  const db = new Database(path, { fileMustExist: path !== ":memory:", timeout: timeoutMs });
  startupMark("native addon loaded, file opened");
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.pragma("foreign_keys = ON");
    startupMark("pragmas set");
    migrate(db, path);
    startupMark("migration checked");
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

function createPrivateFile(path: string): void {
  if (existsSync(path)) {
    if (statSync(path).isDirectory()) {
      throw new QuiesceError(
        ErrorCode.STORE_INVALID,
        `the SQLite store ${path} is a directory, not a database file`,
      );
    }
    return;
  }
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, "wx", 0o600));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return; // another process made it first
    throw new QuiesceError(
      ErrorCode.STORE_UNAVAILABLE,
      `cannot create the SQLite store ${path}: ${(e as Error).message}`,
      { cause: e },
    );
  }
}

function migrate(db: Database.Database, path: string): void {
  // Read first: the common case (schema current) takes no write lock.
  if (schemaVersion(db, path) === LATEST_SQLITE_SCHEMA) return;
  // BEGIN IMMEDIATE serializes concurrent starters; the second one finds the work done.
  db.transaction(() => {
    const version = schemaVersion(db, path);
    db.exec(
      "CREATE TABLE IF NOT EXISTS quiesce_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT",
    );
    for (const m of migrations) {
      if (m.version > version) db.exec(m.sql);
    }
    const set = db.prepare(
      "INSERT INTO quiesce_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    );
    set.run("schema_version", String(LATEST_SQLITE_SCHEMA));
    db.prepare("INSERT OR IGNORE INTO quiesce_meta (key, value) VALUES ('store_id', ?)").run(
      randomUuid(),
    );
  }).immediate();
}

/** 0 for an empty database; refuses files that are someone else's database or too new. */
export function schemaVersion(db: Database.Database, path: string): number {
  const tables = (
    db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all() as {
      name: string;
    }[]
  ).map((t) => t.name);
  if (tables.length === 0) return 0;
  if (!tables.includes("quiesce_meta")) {
    throw new QuiesceError(
      ErrorCode.STORE_INVALID,
      `${path} is a SQLite database but not a quiesce store (it has tables ${tables.slice(0, 5).join(", ")}); point --store at a new or quiesce file`,
    );
  }
  const row = db.prepare("SELECT value FROM quiesce_meta WHERE key = 'schema_version'").get() as
    { value: string } | undefined;
  const version = Number(row?.value ?? 0);
  if (version > LATEST_SQLITE_SCHEMA) {
    throw new QuiesceError(
      ErrorCode.SCHEMA_TOO_NEW,
      `the store ${path} has schema version ${version}, newer than this quiesce understands (${LATEST_SQLITE_SCHEMA}); upgrade quiesce`,
      { details: { version, supported: LATEST_SQLITE_SCHEMA } },
    );
  }
  return version;
}

/** Maps a better-sqlite3 error to one sentence a user can act on. */
export function sqliteError(e: unknown, path: string, doing: string): QuiesceError {
  if (e instanceof QuiesceError) return e;
  const code = (e as { code?: string }).code ?? "";
  const msg = (e as Error).message;
  if (code === "SQLITE_NOTADB") {
    return new QuiesceError(
      ErrorCode.STORE_INVALID,
      `${path} is not a SQLite database, so not a quiesce store`,
      { cause: e },
    );
  }
  if (code.startsWith("SQLITE_CORRUPT")) {
    return new QuiesceError(
      ErrorCode.STORE_INVALID,
      `the SQLite store ${path} is corrupt (${msg}); restore it from a backup or move it aside`,
      { cause: e },
    );
  }
  return new QuiesceError(
    ErrorCode.STORE_UNAVAILABLE,
    `the SQLite store ${path} failed to ${doing}: ${msg}`,
    {
      cause: e,
    },
  );
}
