import { dirname, join } from "node:path";
import { parsePgUrl } from "../store/postgres/pg-url.js";
import { defaultSqlitePath, type StoreTarget } from "../store/open-store.js";

/**
 * Where a wave's per-host logs go when `--log-dir` does not say: beside the store the wave
 * lives in (`<store dir>/waves/NAME` for a SQLite file), so two stores never mix their waves'
 * logs and none lands in another store's state directory. A PostgreSQL store has no local
 * directory: its logs go under this user's state directory, in one directory per database and
 * schema (`<state dir>/postgres/HOST_PORT_DB_SCHEMA/waves/NAME`).
 */
export function defaultWaveLogDir(
  target: StoreTarget,
  wave: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (target.backend === "sqlite") return join(dirname(target.path), "waves", wave);
  const { connectionString, schema } = parsePgUrl(target.url);
  let where = "postgres";
  try {
    const u = new URL(connectionString);
    where = [u.hostname || "local", u.port || "5432", u.pathname.replace(/^\//, "") || "-"].join(
      "_",
    );
  } catch {
    /* a form node-postgres accepts but URL does not (a socket path): one shared directory */
  }
  const safe = `${where}_${schema}`.replace(/[^A-Za-z0-9._-]/g, "_");
  return join(dirname(defaultSqlitePath(env)), "postgres", safe, "waves", wave);
}
