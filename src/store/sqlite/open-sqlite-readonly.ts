import Database from "better-sqlite3";
import {
  accessSync,
  constants,
  existsSync,
  readFileSync,
  statSync,
  type BigIntStats,
} from "node:fs";
import { dirname } from "node:path";
import { ErrorCode, QuiesceError, storeMissing } from "../../domain/errors.js";
import { LATEST_SQLITE_SCHEMA, openSqlite, schemaVersion, sqliteError } from "./open-sqlite.js";

/**
 * Opens an existing store for reading only: nothing is created (no file, no directory, no
 * schema), so a mistyped `--store` is reported instead of becoming an empty, healthy store.
 *
 * A monitoring user may only have read permission (file 0640, directory 0750, group quiesce).
 * SQLite reads a WAL database read-only when its -wal and -shm files exist and are readable
 * (a writer is connected, or one crashed): the normal read-only open below. When no writer is
 * connected, SQLite has checkpointed and deleted both, and a read-only connection cannot
 * create them (SQLITE_READONLY_DIRECTORY). The main file then holds every commit, so we read
 * it whole and check, by its stat before and after, that no writer touched it meanwhile.
 */
export function openSqliteReadOnly(path: string, busyTimeoutMs = 10_000): Database.Database {
  const st = statOrMissing(path);
  if (st.isDirectory()) {
    throw new QuiesceError(
      ErrorCode.STORE_INVALID,
      `the SQLite store ${path} is a directory, not a database file`,
    );
  }
  if (st.size === 0n) throw storeMissing(path); // an empty file: a store being created, or none
  for (let attempt = 1; ; attempt++) {
    let db: Database.Database;
    try {
      db = openInPlace(path, busyTimeoutMs);
    } catch (e) {
      if (!needsSnapshot(e)) throw sqliteError(e, path, "open");
      const snap = snapshot(path);
      if (snap === null) {
        if (attempt < 20) continue; // a writer came or went while we read: look again
        throw sqliteError(e, path, "open");
      }
      db = snap;
    }
    return checkSchema(db, path, busyTimeoutMs);
  }
}

function openInPlace(path: string, timeout: number): Database.Database {
  const db = new Database(path, { readonly: true, fileMustExist: true, timeout });
  try {
    db.prepare("SELECT 1 FROM sqlite_master LIMIT 1").get(); // opens the WAL: fails here if it must
    db.pragma("synchronous = FULL"); // what every writer uses; `store info` shows this connection
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

/** SQLite could not open the -wal/-shm files and could not create them. */
function needsSnapshot(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return (
    code === "SQLITE_READONLY_DIRECTORY" ||
    code === "SQLITE_CANTOPEN" ||
    code === "SQLITE_READONLY_CANTINIT"
  );
}

/** The whole file, if no writer was connected and nothing changed it while it was read. */
function snapshot(path: string): Database.Database | null {
  const wal = `${path}-wal`;
  if (existsSync(wal)) return null;
  const before = statSync(path, { bigint: true });
  const bytes = readFileSync(path);
  const after = statSync(path, { bigint: true });
  if (existsSync(wal) || !sameFile(before, after)) return null;
  // Bytes 18-19 say "WAL"; an in-memory copy has no -shm, so it is read as a rollback-journal
  // database, which a fully checkpointed file is.
  if (bytes.length >= 20) {
    bytes[18] = 1;
    bytes[19] = 1;
  }
  return new Database(bytes, { readonly: true });
}

function sameFile(a: BigIntStats, b: BigIntStats): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

function statOrMissing(path: string): BigIntStats {
  try {
    return statSync(path, { bigint: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw storeMissing(path);
    throw new QuiesceError(
      ErrorCode.STORE_UNAVAILABLE,
      `cannot read the SQLite store ${path}: ${(e as Error).message}`,
      { cause: e },
    );
  }
}

/**
 * A current schema is read as is. An older one is brought up to date only by someone allowed
 * to write the store; a reader is told who can.
 */
function checkSchema(db: Database.Database, path: string, timeout: number): Database.Database {
  let version: number;
  try {
    version = schemaVersion(db, path);
  } catch (e) {
    db.close();
    throw sqliteError(e, path, "read its schema");
  }
  if (version === LATEST_SQLITE_SCHEMA) return db;
  db.close();
  if (version === 0) throw storeMissing(path);
  if (canWrite(path)) return openSqlite(path, { busyTimeoutMs: timeout });
  throw new QuiesceError(
    ErrorCode.STORE_UNAVAILABLE,
    `the store ${path} has schema version ${version}, older than this quiesce (${LATEST_SQLITE_SCHEMA}); run \`quiesce store migrate\` as a user who can write it`,
  );
}

function canWrite(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    accessSync(dirname(path), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
