import { Leases } from "../../src/lease/leases.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { interleave, perSec } from "../lib/interleave.js";
import { runTimes } from "../lib/timed-loop.js";
import { benchOwner, TTL_MS } from "./subjects.js";
import { openRawSqlite } from "./raw-sqlite.js";

export interface JsOverhead {
  /** Microseconds per acquire+release cycle on an in-memory SQLite database (no disk). */
  rawUs: number;
  storeUs: number;
  leasesUs: number;
}

/**
 * The same three SQLite contestants on `:memory:`: with the disk out of the way, what is
 * left is the CPU cost of the statements plus each layer's JavaScript.
 */
export async function measureJsOverhead(ms: number): Promise<JsOverhead> {
  const raw = openRawSqlite(":memory:", "mem:raw", benchOwner("mem:raw"), TTL_MS);
  const store = new SqliteStore(":memory:");
  const leases = new Leases(new SqliteStore(":memory:"));
  const owner = benchOwner("mem:store");
  const storeOp = async () => {
    const r = await store.acquire({ scope: "mem:store", ttlMs: TTL_MS, owner, ticket: null });
    if (!r.ok) throw new Error("in-memory bench scope is not free");
    await store.release({
      scope: "mem:store",
      token: r.lease.token,
      runId: owner.runId,
      host: owner.host,
      pid: owner.pid,
      reason: "bench",
    });
  };
  const leasesOp = async () => {
    const lease = await leases.acquire("mem:leases", { ttl: TTL_MS, keepAlive: false });
    await lease.release("bench");
  };
  try {
    for (const op of [raw.cycle, storeOp, leasesOp]) await runTimes(500, op);
    const run = await interleave(
      [
        { key: "raw", op: raw.cycle },
        { key: "store", op: storeOp },
        { key: "leases", op: leasesOp },
      ],
      ms,
    );
    const us = (k: string) => 1e6 / perSec(run.totals.get(k));
    return { rawUs: us("raw"), storeUs: us("store"), leasesUs: us("leases") };
  } finally {
    raw.close();
    await store.close();
    await leases.close();
  }
}
