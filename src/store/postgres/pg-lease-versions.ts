import type pg from "pg";
import { LEASE_LIST_COLUMNS, leaseFromListRow, type LeaseListRow } from "../rows.js";
import type { KnownVersions, LeaseVersions } from "../store.js";
import { pgError } from "./pg-connection.js";
import { onBorrowed } from "./pg-tx.js";

const TIMES = new Set<string>(["acquired_at", "heartbeat_at", "expires_at"]);
const COLUMNS = LEASE_LIST_COLUMNS.map((c) => (TIMES.has(c) ? `quiesce_ms(l.${c})` : `l.${c}`));

/**
 * A row's version: xmin, the transaction that wrote this version of the row (every UPDATE
 * writes a new one, whoever makes it: quiesce, or another system by hand), and the token, so
 * that xmin coming round again after four billion transactions cannot pass for no change. A
 * row frozen by VACUUM reads with another xmin: one needless read of it, nothing missed.
 */
const VERSION = `l.xmin::text || ' ' || l.token`;

/**
 * One row with the clock (its scope null), then every held lease's scope and version in scope
 * order: the clock read once, not in every row. The outer ORDER BY puts the clock first (a
 * UNION ALL alone promises no order).
 */
const VERSIONS = `
SELECT scope, version, now FROM (
  SELECT NULL::text AS scope, NULL::text AS version, quiesce_ms(clock_timestamp()) AS now
  UNION ALL
  SELECT l.scope, ${VERSION}, NULL FROM quiesce_leases l WHERE l.held
) AS v ORDER BY scope NULLS FIRST`;

/** The held leases among $1 (scopes), as LEASE_LIST_COLUMNS, then the version. */
const CHANGED = `
SELECT ${COLUMNS.join(", ")}, ${VERSION} FROM quiesce_leases l
 WHERE l.held AND l.scope = ANY($1::text[])`;

/**
 * readLeasesSince on PostgreSQL: the versions first, then only the rows that changed, both in
 * one REPEATABLE READ snapshot (one instant, as listLeases reads it in one statement). With
 * 10,000 leases held the versions cost about a quarter of the whole listing, whose time is
 * mostly the driver parsing 17 columns a row.
 */
export async function readLeasesSince(
  pool: pg.Pool,
  location: string,
  known: KnownVersions,
): Promise<LeaseVersions> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (e) {
    throw pgError(e, location, "list leases");
  }
  return onBorrowed(client, async () => {
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      const rows = (
        await client.query<[string | null, string | null, number | null]>({
          text: VERSIONS,
          rowMode: "array",
        })
      ).rows;
      const now = Number(rows[0]![2]);
      const scopes = new Array<string>(rows.length - 1);
      const stale: string[] = [];
      for (let i = 1; i < rows.length; i++) {
        const [scope, version] = rows[i]!;
        scopes[i - 1] = scope!;
        if (known.get(scope!) !== version) stale.push(scope!);
      }
      const changed: LeaseVersions["changed"] = new Map();
      if (stale.length > 0) {
        const fetched = (
          await client.query<unknown[]>({ text: CHANGED, values: [stale], rowMode: "array" })
        ).rows;
        for (const r of fetched)
          changed.set(r[0] as string, {
            version: r[LEASE_LIST_COLUMNS.length] as string,
            lease: leaseFromListRow(r.slice(0, LEASE_LIST_COLUMNS.length) as LeaseListRow),
          });
      }
      await client.query("COMMIT");
      return { now, scopes, changed };
    } catch (e) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw pgError(e, location, "list leases");
    }
  });
}
