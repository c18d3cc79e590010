/**
 * One simulated agent host (a child process of bench/scale): one `Leases` instance, so one
 * heartbeat keeper and one pool of connections, holding a growing number of host leases.
 *
 *   node dist/bench/scale/keeper.js STORE PREFIX TTL HEARTBEAT
 *
 * Commands (IPC): `grow` acquires leases up to a total count (4 at a time, the pool's size),
 * `snapshot` reports the renewal tally and this process's CPU time, `exit` exits without
 * releasing (the bench drops the schema). Every renewal goes through quiesce's own keeper and
 * `PgStore.renew`; the wrapper around the store only counts.
 */
import { hostname } from "node:os";
import { performance } from "node:perf_hooks";
import type { Lease } from "../../src/lease/lease.js";
import { Leases } from "../../src/lease/leases.js";
import { openStore } from "../../src/store/open-store.js";
import { countRenewals, type RenewTally } from "../lease-cycle/counting-store.js";

export interface KeeperSnapshot {
  mono: number;
  cpuUs: number;
  tally: RenewTally;
  held: number;
  lost: number;
}
export type KeeperMessage =
  | { type: "ready"; applicationName: string }
  | { type: "grown"; held: number; ms: number }
  | { type: "snapshot"; snap: KeeperSnapshot }
  | { type: "error"; message: string };
export type KeeperCommand = { cmd: "grow"; total: number } | { cmd: "snapshot" } | { cmd: "exit" };

const [storeUrl, prefix, ttl, heartbeat] = process.argv.slice(2);
if (!storeUrl || !prefix || !ttl || !heartbeat || !process.send) {
  process.stderr.write("keeper: run me from bench/scale\n");
  process.exit(2);
}
const send = (m: KeeperMessage) => process.send!(m);
const PARALLEL = 4;

const counted = countRenewals(await openStore(storeUrl));
const leases = new Leases(counted.store);
const held: Lease[] = [];

async function grow(total: number): Promise<void> {
  const t0 = performance.now();
  let next = held.length;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      for (let i = next++; i < total; i = next++) {
        held.push(await leases.acquire(`${prefix}:${i}`, { ttl, heartbeat, keepAlive: true }));
      }
    }),
  );
  send({ type: "grown", held: held.length, ms: performance.now() - t0 });
}

process.on("message", (m: KeeperCommand) => {
  if (m.cmd === "exit") process.exit(0);
  const run = async () => {
    if (m.cmd === "grow") return grow(m.total);
    const cpu = process.cpuUsage();
    const active = leases.active.length;
    send({
      type: "snapshot",
      snap: {
        mono: performance.now(),
        cpuUs: cpu.user + cpu.system,
        tally: { ...counted.tally },
        held: active,
        lost: held.length - active,
      },
    });
  };
  run().catch((e: unknown) => {
    send({ type: "error", message: (e as Error).message });
    process.exit(1);
  });
});
// The pool names its sessions `quiesce <host>:<pid>` (pg-connection.ts): the bench finds this
// process's backends in pg_stat_activity by that name.
send({ type: "ready", applicationName: `quiesce ${hostname()}:${process.pid}`.slice(0, 63) });
