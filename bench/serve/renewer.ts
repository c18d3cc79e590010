/**
 * The holders of bench/serve's leases, in a process of their own: renews every held lease once
 * per HEARTBEAT_MS, a slice at a time (10,000 leases with a 10 s heartbeat: 100 leases every
 * 100 ms), so that the leases change between the server's requests as a fleet's would. Stops
 * on SIGTERM and prints how many it renewed per second.
 *
 *   node dist/bench/serve/renewer.js STORE
 */
import { openStore } from "../../src/store/open-store.js";

const HEARTBEAT_MS = 10_000;
const TICK_MS = 100;

const url = process.argv[2];
if (!url) {
  process.stderr.write("renewer: run me from bench/serve\n");
  process.exit(2);
}
const store = await openStore(url);
const { leases } = await store.leases.listLeases();
const items = leases.map((l) => ({ scope: l.scope, token: l.token, ttlMs: l.ttlMs }));
const perTick = Math.max(1, Math.ceil((items.length * TICK_MS) / HEARTBEAT_MS));
let next = 0;
let renewed = 0;
const start = performance.now();
let stopping = false;
process.on("SIGTERM", () => (stopping = true));
process.stdout.write("ready\n");
while (!stopping) {
  const t0 = performance.now();
  const slice = items.slice(next, next + perTick);
  next = next + perTick >= items.length ? 0 : next + perTick;
  const r = await store.leases.renew(slice);
  renewed += slice.length - r.refused.size;
  await new Promise((res) => setTimeout(res, Math.max(0, TICK_MS - (performance.now() - t0))));
}
const perSec = renewed / ((performance.now() - start) / 1000);
process.stdout.write(`${JSON.stringify({ renewed, perSec })}\n`);
await store.close();
