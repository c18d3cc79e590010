import { describeBlockingLease, type LeaseRecord } from "../domain/lease.js";
import type { Store } from "../store/store.js";
import type { AcquireOptions, ResolvedAcquire } from "./acquire-options.js";
import { readClock, sleep } from "../process/clock.js";
import type { Refusal } from "./leases.js";
import { hostIdentity } from "../process/process-identity.js";

const POLL_MS = 500;

/** Leases of the respected systems that concern this host: held from it, or on `host:<this>`. */
export function respectedBlockers(
  leases: readonly LeaseRecord[],
  systems: readonly string[],
  host: string,
): LeaseRecord[] {
  return leases.filter(
    (l) =>
      systems.includes(l.owner.system) && (l.owner.host === host || l.scope === `host:${host}`),
  );
}

/**
 * `--respect backup,hypervisor`: before taking its own lease, wait (within --wait) while any of
 * those systems holds a lease on this host, expired or not: another system's lease is never
 * ours to judge (I6). This is a courtesy check, not mutual exclusion: for that, both systems
 * take the same scope (e.g. `host:NAME`).
 */
export async function waitForRespected(
  store: Store,
  req: ResolvedAcquire,
  options: AcquireOptions,
): Promise<Refusal | null> {
  const host = hostIdentity().host;
  const deadline = readClock().mono + req.waitMs;
  let reported = -Infinity;
  for (;;) {
    const { leases, now } = await store.leases.listLeases();
    const blockers = respectedBlockers(leases, req.respect, host);
    if (blockers.length === 0) return null;
    const b = blockers[0]!;
    const message = `system "${b.owner.system}" holds a lease on this host: ${describeBlockingLease(b, now)}; coordinate with ${b.owner.system}`;
    const left = deadline - readClock().mono;
    if (left <= 0)
      return { ok: false, reason: "respected", holder: b, now, waitersAhead: 0, message };
    if (options.onWait && readClock().mono - reported >= 1000) {
      reported = readClock().mono;
      options.onWait({
        scope: req.scope,
        waitedMs: req.waitMs - left,
        remainingMs: left,
        waitersAhead: 0,
        message,
      });
    }
    await sleep(Math.min(POLL_MS, left), options.signal);
  }
}
