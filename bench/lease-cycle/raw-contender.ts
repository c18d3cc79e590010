/**
 * One contender of the second fairness reference (a child process): our handoff without our
 * library. The PostgreSQL store's own ACQUIRE, PEEK and RELEASE statements, sent by hand on one
 * node-postgres client, with a second client LISTENing: take a place in line with the refused
 * acquisition, wait for the notice naming that ticket (or a 500 ms safety poll), read, hold
 * what the release granted. What this does per second, against ours in the same run, says how
 * much of a handoff our JavaScript costs and how much the protocol (a durable commit, a notice
 * and a read in a row) costs on this machine.
 *
 *   node dist/bench/lease-cycle/raw-contender.js STORE_URL SCOPE HOLD_MS
 */
import { performance } from "node:perf_hooks";
import pg from "pg";
import * as sql from "../../src/store/postgres/pg-statements.js";
import { wakeChannel } from "../../src/store/postgres/pg-wakeups.js";
import { acquisitionDetail, ownerArgs } from "../../src/store/postgres/pg-store.js";
import { pgClientConfig } from "../lib/bench-env.js";
import { formatDuration } from "../../src/domain/duration.js";
import { TICKET_TTL_MS, SAFETY_POLL_MS } from "../../src/lease/wait-queue.js";
import { contend } from "./contender-loop.js";
import { benchOwner } from "./subjects.js";

const TTL_MS = 10_000;

const [storeUrl, scope, holdArg] = process.argv.slice(2);
if (!storeUrl || !scope || !process.send) {
  process.stderr.write("raw-contender: run me from the lease-cycle bench\n");
  process.exit(2);
}
const holdMs = Number(holdArg ?? 5);

const { config, schema } = pgClientConfig(storeUrl, "quiesce-bench-raw-handoff");
const client = new pg.Client(config);
const listener = new pg.Client(config);
await client.connect();
await listener.connect();
const channel = wakeChannel(schema);

/** The ticket this process waits with, the notices that named it, and how to end a wait. */
let waitingFor: string | null = null;
let named = 0;
let wake: (() => void) | null = null;
listener.on("notification", (m) => {
  if (m.channel !== channel || waitingFor === null) return;
  if ((m.payload ?? "").split(" ").at(-1) !== waitingFor) return;
  named++;
  wake?.();
});
await listener.query(`LISTEN "${channel}"`);

const o = benchOwner(scope);
const detail = acquisitionDetail(o, TTL_MS);

/** Acquire-or-queue, then wait for the grant: the lease's token. */
async function take(): Promise<string> {
  const acq = await client.query<{ won: boolean; token: string; ticket: string | null }>({
    name: "raw_acquire",
    text: sql.ACQUIRE,
    values: [scope, null, ...ownerArgs(o), TTL_MS, detail, formatDuration(TTL_MS), TICKET_TTL_MS],
  });
  const row = acq.rows[0];
  if (row?.won) return row.token;
  const ticket = row?.ticket;
  if (!ticket) throw new Error("refused without a place in line");
  waitingFor = ticket;
  const since = performance.now();
  // The first read comes after the ticket: a grant before it is seen by the read.
  for (;;) {
    const seen = named; // a notice during the read ends the wait below at once
    const p = await client.query<{ granted: boolean; token: string }>({
      name: "raw_peek",
      text: sql.PEEK,
      values: [scope, ticket],
    });
    if (p.rows[0]?.granted) {
      waitingFor = null;
      return p.rows[0].token;
    }
    if (named > seen) continue;
    // This loop does not refresh its ticket (a wait here lasts a few holds): one that would go
    // stale ends the run with an error instead of waiting for a grant that cannot come.
    if (performance.now() - since > TICKET_TTL_MS / 2) {
      throw new Error(`waited over ${TICKET_TTL_MS / 2} ms with ticket ${ticket}`);
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, SAFETY_POLL_MS);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });
  }
}

await contend(holdMs, {
  acquire: async () => Number(await take()),
  release: async (token) => {
    const rel = await client.query<{ n: number }>({
      name: "raw_release",
      text: sql.RELEASE,
      values: [scope, token, o.runId, o.host, o.pid, "bench raw contender", channel],
    });
    if (rel.rows[0]?.n !== 1) throw new Error(`release of token ${token} refused`);
  },
});
await client.end().catch(() => undefined);
await listener.end().catch(() => undefined);
process.disconnect();
