import { performance } from "node:perf_hooks";
import type { LeaseStore, Store } from "../../src/store/store.js";

export interface RenewTally {
  calls: number;
  items: number;
  ms: number;
  maxMs: number;
  /** Process CPU time (user + system) spent while a renew() was in flight, µs. */
  cpuUs: number;
  /** Longest time between the starts of two consecutive renewals. */
  maxGapMs: number;
  lastStart: number;
}

/**
 * Wraps a Store and times every renew() the heartbeat keeper makes (one per tick). Every
 * other method passes through untouched.
 */
export function countRenewals(store: Store): {
  store: Store;
  tally: RenewTally;
  nextRenewal(): Promise<void>;
} {
  const tally: RenewTally = {
    calls: 0,
    items: 0,
    ms: 0,
    maxMs: 0,
    cpuUs: 0,
    maxGapMs: NaN,
    lastStart: NaN,
  };
  let waiters: (() => void)[] = [];
  const renew: LeaseStore["renew"] = async (items) => {
    const t = performance.now();
    const cpu = process.cpuUsage();
    if (tally.calls > 0) {
      const gap = t - tally.lastStart;
      tally.maxGapMs = Number.isNaN(tally.maxGapMs) ? gap : Math.max(tally.maxGapMs, gap);
    }
    tally.lastStart = t;
    try {
      return await store.leases.renew(items);
    } finally {
      const ms = performance.now() - t;
      const used = process.cpuUsage(cpu);
      tally.cpuUs += used.user + used.system;
      tally.calls++;
      tally.items += items.length;
      tally.ms += ms;
      tally.maxMs = Math.max(tally.maxMs, ms);
      const w = waiters;
      waiters = [];
      for (const resolve of w) resolve();
    }
  };
  const passThrough = <T extends object>(
    o: T,
    override: Partial<Record<string | symbol, unknown>>,
  ) =>
    new Proxy(o, {
      get(target, prop, receiver) {
        if (prop in override) return override[prop];
        const v: unknown = Reflect.get(target, prop, receiver);
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  const wrapped = passThrough(store, { leases: passThrough(store.leases, { renew }) });
  return {
    store: wrapped,
    tally,
    nextRenewal: () => new Promise<void>((resolve) => waiters.push(resolve)),
  };
}
