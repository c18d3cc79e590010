import { homedir } from "node:os";
import { join } from "node:path";
import { invalidInput } from "../domain/errors.js";
import type { Store } from "./store.js";
import { startupMark } from "../process/startup-marks.js";

/**
 * Where the embedded store lives when nothing says otherwise: a system-wide file for root
 * (every agent on the host shares it), a per-user state file for everyone else.
 */
export function defaultSqlitePath(
  env: NodeJS.ProcessEnv = process.env,
  uid = process.getuid?.() ?? -1,
): string {
  if (uid === 0) return "/var/lib/quiesce/quiesce.db";
  // XDG: a relative XDG_STATE_HOME (or HOME) is invalid and ignored.
  const home = env.HOME && env.HOME.startsWith("/") ? env.HOME : homedir();
  const state =
    env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith("/")
      ? env.XDG_STATE_HOME
      : join(home, ".local", "state");
  return join(state, "quiesce", "quiesce.db");
}

export type StoreTarget =
  { backend: "sqlite"; path: string } | { backend: "postgres"; url: string };

/** `--store` wins over QUIESCE_STORE, which wins over the default file. */
export function resolveStore(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): StoreTarget {
  const source = flag !== undefined ? "--store" : "QUIESCE_STORE";
  const spec = flag ?? (env.QUIESCE_STORE || undefined);
  if (spec === undefined) return { backend: "sqlite", path: defaultSqlitePath(env) };
  if (spec.trim() === "") throw invalidInput(`${source}: the store location is empty`);
  if (/^postgres(ql)?:\/\//i.test(spec)) return { backend: "postgres", url: spec };
  if (spec.startsWith("sqlite:")) {
    // sqlite:/abs, sqlite:rel, sqlite:///abs; `sqlite://x` would name a host, and SQLite has none.
    const rest = spec.slice("sqlite:".length);
    const path = rest.startsWith("///") ? rest.slice(2) : rest;
    if (path === "" || (rest.startsWith("//") && !rest.startsWith("///"))) {
      throw invalidInput(
        `${source}: sqlite: needs a file path, e.g. sqlite:/var/lib/quiesce/quiesce.db`,
      );
    }
    return { backend: "sqlite", path };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(spec)) {
    throw invalidInput(
      `${source}: "${spec.split("://")[0]}://" stores are not supported; use a file path, sqlite:PATH or postgres://...`,
    );
  }
  return { backend: "sqlite", path: spec };
}

export interface OpenStoreOptions {
  /**
   * For commands that only read: the store must already exist (STORE_MISSING otherwise) and
   * nothing is created, migrated or written; works with read permission only (README,
   * "Monitoring as a non-root user").
   */
  readOnly?: boolean;
}

export async function openStore(
  flag?: string,
  env: NodeJS.ProcessEnv = process.env,
  options: OpenStoreOptions = {},
): Promise<Store> {
  const target = resolveStore(flag, env);
  const readOnly = options.readOnly === true;
  // Each backend (and its driver) is loaded only when used: the CLI starts faster without pg
  // when the store is SQLite, and without better-sqlite3's native module when it is PostgreSQL.
  if (target.backend === "postgres") {
    const { PgStore } = await import("./postgres/pg-store.js");
    return PgStore.open(target.url, { readOnly });
  }
  const { SqliteStore } = await import("./sqlite/sqlite-store.js");
  startupMark("store modules loaded");
  return new SqliteStore(target.path, { readOnly });
}
