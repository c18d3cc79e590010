/**
 * One contender of the third fairness reference (a child process): our handoff with the
 * fastest wake-up PostgreSQL offers, to show what the protocol itself costs on this machine.
 * The store's own ACQUIRE and RELEASE statements, sent by hand as in raw-contender.ts, but the
 * notice and the re-read are replaced by a doorbell inside the server:
 *
 * - the holder holds a session advisory lock on the scope while it holds the lease, and its
 *   RELEASE gives the lock up inside the releasing statement (after its UPDATE);
 * - the waiter blocks in a function that takes that lock and then reads the lease row FOR KEY
 *   SHARE. The release's UPDATE holds the row until its commit (the fsync included), so the
 *   read returns the moment the grant is durable, with no hop back to the waiter's process and
 *   no second statement: the re-read runs in the server as soon as it can see the grant.
 *
 * The grant stays the durable, fenced one that the store writes; only the wake-up differs. The
 * library does not do this (it would tie a connection to every waiter and holder); this run
 * says whether it would meet the fairness target if it did.
 *
 *   node dist/bench/lease-cycle/doorbell-contender.js STORE_URL SCOPE HOLD_MS
 */
import pg from "pg";
import * as sql from "../../src/store/postgres/pg-statements.js";
import { wakeChannel } from "../../src/store/postgres/pg-wakeups.js";
import { acquisitionDetail, ownerArgs } from "../../src/store/postgres/pg-store.js";
import { pgClientConfig } from "../lib/bench-env.js";
import { formatDuration } from "../../src/domain/duration.js";
import { TICKET_TTL_MS } from "../../src/lease/wait-queue.js";
import { contend } from "./contender-loop.js";
import { benchOwner } from "./subjects.js";

const TTL_MS = 10_000;
/** A wait that sees no release this long gives up the lock attempt and reads again. */
const BELL_TIMEOUT = "500ms";

const [storeUrl, scope, holdArg] = process.argv.slice(2);
if (!storeUrl || !scope || !process.send) {
  process.stderr.write("doorbell-contender: run me from the lease-cycle bench\n");
  process.exit(2);
}
const holdMs = Number(holdArg ?? 5);

const { config, schema } = pgClientConfig(storeUrl, "quiesce-bench-doorbell-handoff");
const client = new pg.Client(config);
await client.connect();
const channel = wakeChannel(schema);

// The waiter's side, created by whichever contender comes first (the transaction-level lock
// keeps four concurrent CREATEs from colliding); it lives in the bench's schema, dropped after.
await client.query("BEGIN");
await client.query("SELECT pg_advisory_xact_lock(hashtext('quiesce-bench-doorbell'))");
await client.query(`
CREATE OR REPLACE FUNCTION quiesce_bench_await_grant(p_scope text, p_ticket bigint, p_bell bigint)
RETURNS TABLE (granted boolean, token bigint) LANGUAGE plpgsql SET lock_timeout = '${BELL_TIMEOUT}' AS $$
DECLARE r record; locked boolean := false;
BEGIN
  BEGIN
    PERFORM pg_advisory_lock(p_bell);
    locked := true;
    -- A new snapshot; FOR KEY SHARE waits for a release still writing the row to commit.
    SELECT l.held, l.granted_ticket, l.token INTO r FROM quiesce_leases l
     WHERE l.scope = p_scope FOR KEY SHARE;
  EXCEPTION WHEN lock_not_available THEN
    -- No release within the timeout: the caller reads again (a session lock outlives the
    -- rolled-back block, so it is given back here).
    IF locked THEN PERFORM pg_advisory_unlock(p_bell); END IF;
    granted := false;
    RETURN NEXT;
    RETURN;
  END;
  granted := coalesce(r.held AND r.granted_ticket = p_ticket, false);
  token := r.token;
  IF NOT granted THEN PERFORM pg_advisory_unlock(p_bell); END IF;
  RETURN NEXT;
END $$`);
await client.query("COMMIT");

const bell = (await client.query<{ k: string }>("SELECT hashtext($1)::bigint AS k", [scope]))
  .rows[0]!.k;
const o = benchOwner(scope);
const detail = acquisitionDetail(o, TTL_MS);
// RELEASE as the store sends it (events, the notice to the head ticket), and the bell given up
// once its UPDATE has run (the final SELECT reads `rel`), before the commit.
const finalSelect = "SELECT count(*)::int AS n FROM rel";
if (!sql.RELEASE.includes(finalSelect))
  throw new Error("doorbell-contender: RELEASE no longer ends as expected");
const RELEASE_RINGING = sql.RELEASE.replace(
  finalSelect,
  "SELECT count(*)::int AS n, bool_and(pg_advisory_unlock($8::bigint)) AS rang FROM rel",
);

/** Acquire-or-queue, then wait at the doorbell until a release grants the lease: its token. */
async function take(): Promise<string> {
  const acq = await client.query<{ won: boolean; token: string; ticket: string | null }>({
    name: "bell_acquire",
    text: sql.ACQUIRE,
    values: [scope, null, ...ownerArgs(o), TTL_MS, detail, formatDuration(TTL_MS), TICKET_TTL_MS],
  });
  const row = acq.rows[0];
  if (row?.won) {
    // Won outright (the first holder): ring for the next one too.
    await client.query({ name: "bell_lock", text: "SELECT pg_advisory_lock($1)", values: [bell] });
    return row.token;
  }
  const ticket = row?.ticket;
  if (!ticket) throw new Error("refused without a place in line");
  const since = Date.now();
  for (;;) {
    const r = await client.query<{ granted: boolean; token: string }>({
      name: "bell_await",
      text: "SELECT granted, token FROM quiesce_bench_await_grant($1, $2, $3)",
      values: [scope, ticket, bell],
    });
    if (r.rows[0]?.granted) return r.rows[0].token;
    // Not this ticket's turn (the lock's queue and the line can differ): wait again. A ticket
    // that would go stale ends the run with an error instead (this loop does not refresh it).
    if (Date.now() - since > TICKET_TTL_MS / 2)
      throw new Error(`waited over ${TICKET_TTL_MS / 2} ms with ticket ${ticket}`);
  }
}

await contend(holdMs, {
  acquire: async () => Number(await take()),
  release: async (token) => {
    const rel = await client.query<{ n: number }>({
      name: "bell_release",
      text: RELEASE_RINGING,
      values: [scope, token, o.runId, o.host, o.pid, "bench doorbell contender", channel, bell],
    });
    if (rel.rows[0]?.n !== 1) throw new Error(`release of token ${token} refused`);
  },
});
await client.end().catch(() => undefined);
process.disconnect();
