import pg from "pg";
import { performance } from "node:perf_hooks";

export interface HandoffReference {
  /** Median and p90 of the time from one session's unlock returning to the blocked session's
   * lock returning, ms. */
  p50Ms: number;
  p90Ms: number;
  n: number;
}

/**
 * The reference for the handoff gap: `pg_advisory_lock` between two sessions. One holds the
 * lock, the other blocks in `pg_advisory_lock`; the holder unlocks and the server wakes the
 * blocked backend at once. Measured from the unlock's reply to the lock's reply, in one
 * process (one clock). Null when PostgreSQL is not reachable.
 */
export async function measureAdvisoryHandoff(
  pgUrl: string,
  rounds = 200,
): Promise<HandoffReference | null> {
  const a = new pg.Client({ connectionString: pgUrl, application_name: "quiesce-bench-advisory" });
  const b = new pg.Client({ connectionString: pgUrl, application_name: "quiesce-bench-advisory" });
  try {
    await a.connect();
    await b.connect();
  } catch {
    await a.end().catch(() => undefined);
    await b.end().catch(() => undefined);
    return null;
  }
  const key = 0x71756965; // "quie"
  const gaps: number[] = [];
  try {
    for (let i = 0; i < rounds; i++) {
      await a.query("SELECT pg_advisory_lock($1)", [key]);
      const blocked = b.query("SELECT pg_advisory_lock($1)", [key]).then(() => performance.now());
      await new Promise((r) => setTimeout(r, 1)); // b is now waiting on the server
      await a.query("SELECT pg_advisory_unlock($1)", [key]);
      const released = performance.now();
      gaps.push((await blocked) - released);
      await b.query("SELECT pg_advisory_unlock($1)", [key]);
    }
  } finally {
    await a.end().catch(() => undefined);
    await b.end().catch(() => undefined);
  }
  gaps.sort((x, y) => x - y);
  const at = (q: number) => gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))]!;
  return { p50Ms: Math.max(0, at(0.5)), p90Ms: Math.max(0, at(0.9)), n: gaps.length };
}
