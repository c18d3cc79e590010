/**
 * The heartbeat-cost holder (a child process): acquires COUNT scopes through Leases with
 * keepAlive (heartbeat 1 s, ttl 5 s), then lets the keeper run. On each "snapshot" request it
 * waits for the next renewal, lets 200 ms pass (so the snapshot falls between ticks), and
 * reports its renewal tally and CPU time. It exits without releasing: the bench discards
 * the store.
 *
 *   node dist/bench/lease-cycle/holder.js STORE PREFIX COUNT
 */
import { performance } from "node:perf_hooks";
import type { Lease } from "../../src/lease/lease.js";
import { Leases } from "../../src/lease/leases.js";
import { openStore } from "../../src/store/open-store.js";
import { epochMs, sleep } from "../lib/timed-loop.js";
import { countRenewals, type RenewTally } from "./counting-store.js";

export interface Snapshot {
  at: number;
  cpuUs: number;
  mono: number;
  tally: RenewTally;
  held: number;
  /** Up to 3 distinct reasons leases were lost for, with how many. */
  lostReasons: string[];
}
export type HolderMessage =
  | {
      type: "acquired";
      ms: number;
      count: number;
      /** ms per acquisition over the first and the last 10% of them. */
      firstTenthMsEach: number;
      lastTenthMsEach: number;
      /** Longest time between two renewals while acquiring (the heartbeat is 1 s). */
      maxRenewGapMs: number;
    }
  | { type: "snapshot"; snap: Snapshot }
  | { type: "error"; message: string };
export type HolderCommand = { cmd: "snapshot" } | { cmd: "exit" };

const [storeUrl, prefix, countArg] = process.argv.slice(2);
if (!storeUrl || !prefix || !process.send) {
  process.stderr.write("holder: run me from the lease-cycle bench\n");
  process.exit(2);
}
const count = Number(countArg ?? 1000);
const send = (m: HolderMessage) => process.send!(m);
/**
 * Store calls that resolve at once (SQLite) never let timers run: yield now and then so the
 * keeper can renew the leases already held while the rest are acquired. A timer, not
 * setImmediate: the keeper re-arms its renewal timer on every acquisition, and an overdue one
 * re-armed at 0 ms is never due yet when setImmediate hands the loop back (see the report).
 */
const YIELD_EVERY = 50;

try {
  const counted = countRenewals(await openStore(storeUrl));
  const leases = new Leases(counted.store);
  const t0 = performance.now();
  const parallel = counted.store.backend === "postgres" ? 4 : 1;
  let next = 0;
  const held: Lease[] = [];
  const tenth = Math.max(1, Math.floor(count / 10));
  const marks: number[] = [];
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let i = next++; i < count; i = next++) {
        held.push(
          await leases.acquire(`${prefix}:${i}`, { ttl: "5s", heartbeat: "1s", keepAlive: true }),
        );
        if (held.length % tenth === 0) marks.push(performance.now());
        if (i % YIELD_EVERY === 0) await sleep(0);
      }
    }),
  );
  const ms = performance.now() - t0;
  send({
    type: "acquired",
    ms,
    count,
    firstTenthMsEach: ((marks[0] ?? NaN) - t0) / tenth,
    lastTenthMsEach: (t0 + ms - (marks.at(-2) ?? NaN)) / tenth,
    maxRenewGapMs: counted.tally.maxGapMs,
  });

  process.on("message", (m: HolderCommand) => {
    if (m.cmd === "exit") process.exit(0);
    void (async () => {
      await Promise.race([counted.nextRenewal(), sleep(3000)]);
      await sleep(200);
      const cpu = process.cpuUsage();
      send({
        type: "snapshot",
        snap: {
          at: epochMs(),
          cpuUs: cpu.user + cpu.system,
          mono: performance.now(),
          tally: { ...counted.tally },
          held: leases.active.length,
          lostReasons: lostReasons(held),
        },
      });
    })();
  });
} catch (e) {
  send({ type: "error", message: (e as Error).message });
  process.exit(1);
}

function lostReasons(held: readonly Lease[]): string[] {
  const by = new Map<string, number>();
  for (const l of held) {
    const r = l.lostReason?.replace(/\d+/g, "N");
    if (r) by.set(r, (by.get(r) ?? 0) + 1);
  }
  return [...by].slice(0, 3).map(([r, n]) => `${n} x ${r}`);
}
