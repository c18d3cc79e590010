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
import type { Acquisition, ContenderMessage, ParentMessage } from "./contender.js";
import { epochMs, sleep } from "../lib/timed-loop.js";

const [pgUrl, keyArg, holdArg] = process.argv.slice(2);
if (!pgUrl || !keyArg || !process.send) {
  process.stderr.write("advisory-contender: run me from the lease-cycle bench\n");
  process.exit(2);
}
const key = Number(keyArg);
const holdMs = Number(holdArg ?? 5);
const send = (m: ContenderMessage) => process.send!(m);

const client = new pg.Client({
  connectionString: pgUrl,
  application_name: "quiesce-bench-advisory",
});
await client.connect();
// Named statements, as ours are: the reference pays no parsing either.
const lock = { name: "lock", text: "SELECT pg_advisory_lock($1)", values: [key] };
const unlock = { name: "unlock", text: "SELECT pg_advisory_unlock($1)", values: [key] };
const go = await new Promise<ParentMessage>((resolve) => {
  process.once("message", (m) => resolve(m as ParentMessage));
  send({ type: "ready" });
});
const log: Acquisition[] = [];
let error: string | undefined;
let cpu = process.cpuUsage();
let token = 0;
try {
  await sleep(Math.max(0, go.startAt - epochMs()));
  cpu = process.cpuUsage();
  while (epochMs() < go.endAt) {
    const waitStart = epochMs();
    await client.query(lock);
    const acquiredAt = epochMs();
    await sleep(holdMs);
    const heldUntil = epochMs();
    await client.query(unlock);
    // No fencing token here: the parent orders the log by acquisition time instead.
    log.push({
      pid: process.pid,
      token: token++,
      waitStart,
      acquiredAt,
      heldUntil,
      releasedAt: epochMs(),
    });
  }
} catch (e) {
  error = (e as Error).message;
}
const used = process.cpuUsage(cpu);
send({
  type: "done",
  log,
  refused: 0,
  error,
  calls: {},
  cpuMs: (used.user + used.system) / 1000,
});
await client.end().catch(() => undefined);
process.disconnect();
