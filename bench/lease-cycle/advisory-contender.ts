/**
 * One contender of the fairness reference (a child process): the same loop as contender.ts,
 * with PostgreSQL's own lock instead of a lease: block in `pg_advisory_lock`, hold a few ms,
 * `pg_advisory_unlock`, get back in line at once, until the parent's deadline. What the
 * server's lock manager achieves with the same processes, holds and machine is the best a
 * handoff through PostgreSQL can do (no table, no commit, no notice, no re-read).
 *
 *   node dist/bench/lease-cycle/advisory-contender.js PG_URL KEY HOLD_MS
 */
import pg from "pg";
import { contend } from "./contender-loop.js";

const [pgUrl, keyArg, holdArg] = process.argv.slice(2);
if (!pgUrl || !keyArg || !process.send) {
  process.stderr.write("advisory-contender: run me from the lease-cycle bench\n");
  process.exit(2);
}
const key = Number(keyArg);
const holdMs = Number(holdArg ?? 5);

const client = new pg.Client({
  connectionString: pgUrl,
  application_name: "quiesce-bench-advisory",
});
await client.connect();
// Named statements, as ours are: the reference pays no parsing either.
const lock = { name: "lock", text: "SELECT pg_advisory_lock($1)", values: [key] };
const unlock = { name: "unlock", text: "SELECT pg_advisory_unlock($1)", values: [key] };
// No fencing token here: the parent orders the log by acquisition time instead.
let token = 0;
await contend(holdMs, {
  acquire: async () => {
    await client.query(lock);
    return token++;
  },
  release: async () => {
    await client.query(unlock);
  },
});
await client.end().catch(() => undefined);
process.disconnect();
