/**
 * One contender of the fairness run (a child process): waits in line for one scope through
 * Leases.tryAcquire(scope, { wait }), holds it a few ms, releases, and gets back in line at
 * once, until the parent's deadline. Sends its log to the parent at the end.
 *
 *   node dist/bench/lease-cycle/contender.js STORE SCOPE HOLD_MS
 */
import { performance } from "node:perf_hooks";
import { Leases } from "../../src/lease/leases.js";
import { openStore } from "../../src/store/open-store.js";
import type { Lease } from "../../src/lease/lease.js";
import { contend } from "./contender-loop.js";

export interface Acquisition {
  pid: number;
  token: number;
  waitStart: number;
  acquiredAt: number;
  /** When the hold ended and release() was called. */
  heldUntil: number;
  releasedAt: number;
}

export type ContenderMessage =
  | { type: "ready" }
  | {
      type: "done";
      log: Acquisition[];
      refused: number;
      error?: string;
      /** Calls this process made to the store's lease methods during the run, by method. */
      calls: Record<string, number>;
      /** Time those calls took (from the call to its promise settling), ms, by method. */
      callMs?: Record<string, number>;
      /** CPU time (user + system) of this process during the run, ms. */
      cpuMs: number;
    };
export type ParentMessage = { type: "go"; startAt: number; endAt: number };

const [storeUrl, scope, holdArg] = process.argv.slice(2);
if (!storeUrl || !scope || !process.send) {
  process.stderr.write("contender: run me from the lease-cycle bench\n");
  process.exit(2);
}
const holdMs = Number(holdArg ?? 5);

const store = await openStore(storeUrl);
// Every call to the store's lease methods is counted: how many reads and writes a handoff costs
// does not depend on the machine's load, the times do.
const calls: Record<string, number> = {};
const callMs: Record<string, number> = {};
const counted = new Proxy(store.leases, {
  get(target, key, receiver) {
    const v = Reflect.get(target, key, receiver) as unknown;
    if (typeof v !== "function" || typeof key !== "string") return v;
    return (...args: unknown[]) => {
      calls[key] = (calls[key] ?? 0) + 1;
      const t = performance.now();
      const r = (v as (...a: unknown[]) => unknown).apply(target, args);
      const took = () => (callMs[key] = (callMs[key] ?? 0) + performance.now() - t);
      if (r instanceof Promise) r.then(took, took);
      else took();
      return r;
    };
  },
});
const leases = new Leases(
  new Proxy(store, {
    get: (t, k, r) => (k === "leases" ? counted : (Reflect.get(t, k, r) as unknown)),
  }),
);
let holding: Lease | null = null;
await contend(holdMs, {
  acquire: async () => {
    const r = await leases.tryAcquire(scope, { wait: "30s", keepAlive: false, ttl: "10s" });
    if (!r.ok) return null;
    holding = r.lease;
    return r.lease.token;
  },
  release: async () => {
    await holding!.release("bench contender");
    holding = null;
  },
  onStart: () => {
    for (const k of Object.keys(calls)) delete calls[k];
    for (const k of Object.keys(callMs)) delete callMs[k];
  },
  report: () => ({ calls, callMs }),
});
await leases.close();
process.disconnect();
