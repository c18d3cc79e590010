import type { EventInput } from "../../../src/domain/event.js";
import type { LeaseRecord } from "../../../src/domain/lease.js";
import type { RenewItem, RenewOutcome, Store } from "../../../src/store/store.js";

/**
 * A store whose renew() the test scripts: succeed, refuse, fail, or hang. Only what the keeper
 * and Lease use is implemented; anything else throws so a test cannot pass by accident.
 */
export class ScriptedStore {
  calls: RenewItem[][] = [];
  recorded: EventInput[] = [];
  inFlight = 0;
  maxInFlight = 0;
  mode: "ok" | "refuse" | "fail" | "hang" = "ok";
  delayMs = 0;

  asStore(): Store {
    const scripted = new Proxy(this, {
      get(target, prop) {
        if (prop in target) return (target as unknown as Record<string | symbol, unknown>)[prop];
        throw new Error(`ScriptedStore: ${String(prop)} is not scripted`);
      },
    });
    const events = { record: (e: EventInput) => this.recordEvent(e) };
    return new Proxy(scripted, {
      get(target, prop) {
        if (prop === "leases") return scripted;
        if (prop === "events") return events;
        return (target as unknown as Record<string | symbol, unknown>)[prop];
      },
    }) as unknown as Store;
  }

  async renew(items: readonly RenewItem[]): Promise<RenewOutcome> {
    this.calls.push([...items]);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.mode === "hang") await new Promise(() => undefined);
      if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
      if (this.mode === "fail") {
        const { QuiesceError } = await import("../../../src/domain/errors.js");
        throw new QuiesceError("STORE_UNAVAILABLE", "scripted outage");
      }
      return { refused: new Set(this.mode === "refuse" ? items.map((i) => i.scope) : []) };
    } finally {
      this.inFlight--;
    }
  }

  recordEvent(e: EventInput): Promise<void> {
    this.recorded.push(e);
    return Promise.resolve();
  }
}

export function record(scope: string, token = 1): LeaseRecord {
  return {
    scope,
    token,
    ttlMs: 0,
    acquiredAt: 0,
    heartbeatAt: 0,
    expiresAt: 0,
    owner: {
      runId: `r-${scope}`,
      system: "quiesce",
      host: "h",
      pid: 1,
      pidStart: null,
      bootId: null,
      childPid: null,
      childPidStart: null,
      command: null,
      note: null,
    },
  };
}
