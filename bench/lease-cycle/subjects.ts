import { join } from "node:path";
import type { LeaseOwner } from "../../src/domain/lease.js";
import { resolveAcquire } from "../../src/lease/acquire-options.js";
import { Leases } from "../../src/lease/leases.js";
import { PgStore } from "../../src/store/postgres/pg-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import type { BackendName } from "../lib/args.js";
import { pgStoreUrl } from "../lib/bench-env.js";
import type { Op } from "../lib/timed-loop.js";
import { openRawPg } from "./raw-pg.js";
import { openRawSqlite } from "./raw-sqlite.js";

export const TTL_MS = 30_000;

/** Where a backend's store lives for this run. */
export interface Target {
  backend: BackendName;
  /** A SQLite file path or a PostgreSQL store URL (with ?schema=). */
  url: string;
}

export function targetFor(
  backend: BackendName,
  dir: string,
  pgServer: string,
  file = "bench.db",
): Target {
  return backend === "sqlite"
    ? { backend, url: join(dir, file) }
    : { backend, url: pgStoreUrl(pgServer) };
}

export function openTarget(t: Target): Promise<Store> {
  return t.backend === "sqlite" ? Promise.resolve(new SqliteStore(t.url)) : PgStore.open(t.url);
}

/** The owner a long-lived caller would build once and reuse. */
export function benchOwner(scope: string): LeaseOwner {
  return resolveAcquire(scope, { ttl: TTL_MS, runId: "r-bench-lease-cycle" }).owner;
}

export interface Subject {
  op: Op;
  close(): Promise<void>;
}

/** Store.acquire + Store.release on an opened store. */
export async function storeSubject(t: Target, scope: string): Promise<Subject> {
  const store = await openTarget(t);
  const owner = benchOwner(scope);
  return {
    op: async () => {
      const r = await store.leases.acquire({ scope, ttlMs: TTL_MS, owner, ticket: null });
      if (!r.ok) throw new Error(`bench scope ${scope} is not free: ${r.reason}`);
      const token = r.lease.token;
      const rel = await store.leases.release({
        scope,
        token,
        runId: owner.runId,
        host: owner.host,
        pid: owner.pid,
        reason: "bench",
      });
      if (!rel.ok) throw new Error(`bench release refused: ${rel.reason}`);
    },
    close: () => store.close(),
  };
}

/** Leases.acquire(scope, { keepAlive: false }) + lease.release(). */
export async function leasesSubject(t: Target, scope: string): Promise<Subject> {
  const leases = new Leases(await openTarget(t));
  return {
    op: async () => {
      const lease = await leases.acquire(scope, { ttl: TTL_MS, keepAlive: false });
      await lease.release("bench");
    },
    close: () => leases.close(),
  };
}

/** The same statements, issued raw. The schema must exist (open the store once first). */
export async function rawSubject(t: Target, scope: string, prepared = false): Promise<Subject> {
  const owner = benchOwner(scope);
  if (t.backend === "sqlite") {
    const raw = openRawSqlite(t.url, scope, owner, TTL_MS);
    return { op: raw.cycle, close: () => Promise.resolve(raw.close()) };
  }
  const raw = await openRawPg(t.url, scope, owner, TTL_MS, prepared);
  return { op: raw.cycle, close: raw.close };
}
