import { join } from "node:path";
import type {
  Ack,
  DispatchRequest,
  LookupAnswer,
  Provider,
  ProviderCapabilities,
} from "../../../src/journal/provider.js";
import { Leases } from "../../../src/lease/leases.js";
import { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";
import { tempDir } from "../../support/paths.js";

/** A fresh SQLite store file, a Leases on it, and a cleanup. */
export function tempStore(): {
  store: SqliteStore;
  path: string;
  leases: Leases;
  cleanup: () => Promise<void>;
} {
  const t = tempDir("quiesce-journal-");
  const path = join(t.dir, "q.db");
  const store = new SqliteStore(path);
  const leases = new Leases(store, { takeover: { auto: false } });
  return {
    store,
    path,
    leases,
    cleanup: async () => {
      await leases.close().catch(() => undefined);
      t.cleanup();
    },
  };
}

export type Behaviour = "final" | "pending" | "throw-landed" | "throw-lost" | "hold";

/**
 * An in-process provider with a ledger, scripted per dispatch: `final` acks with the result,
 * `pending` acks without (read it with lookup), `throw-landed` executes and then fails the
 * call (the ack is lost), `throw-lost` fails before executing, `hold` executes and answers
 * only on release().
 */
export class FakeProvider implements Provider {
  readonly calls: DispatchRequest[] = [];
  readonly executions = new Map<string, number>();
  readonly lookups: string[] = [];
  readonly landed = new Map<string, { requestId: string; result: unknown }>();
  script: Behaviour[] = [];
  fallback: Behaviour = "final";
  /** Called when dispatch starts, before anything else (e.g. to inspect the store). */
  onDispatch: ((req: DispatchRequest) => void | Promise<void>) | null = null;
  private holds: (() => void)[] = [];
  private n = 0;

  constructor(
    readonly name: string,
    readonly capabilities: ProviderCapabilities,
  ) {
    if (!capabilities.statusLookup) delete (this as Partial<FakeProvider>).lookup;
  }

  async dispatch(req: DispatchRequest): Promise<Ack> {
    this.calls.push(req);
    await this.onDispatch?.(req);
    const b = this.script.shift() ?? this.fallback;
    req.sent();
    if (b === "throw-lost") throw new Error("connection reset before the provider read it");
    const d = this.execute(req.key, req.request);
    if (b === "throw-landed") throw new Error("connection reset after the provider executed it");
    if (b === "hold") await new Promise<void>((resolve) => this.holds.push(resolve));
    return b === "pending"
      ? { requestId: d.requestId, pending: true }
      : { requestId: d.requestId, result: d.result };
  }

  lookup(key: string): Promise<LookupAnswer> {
    this.lookups.push(key);
    const d = this.landed.get(key);
    return Promise.resolve(
      d ? { status: "observed", requestId: d.requestId, result: d.result } : { status: "absent" },
    );
  }

  release(): void {
    for (const r of this.holds.splice(0)) r();
  }

  executed(key: string): number {
    return this.executions.get(key) ?? 0;
  }

  private execute(key: string, request: unknown): { requestId: string; result: unknown } {
    const seen = this.landed.get(key);
    if (seen && this.capabilities.idempotencyKey) return seen;
    const d = { requestId: `req-${++this.n}`, result: { done: key, request } };
    this.landed.set(key, d);
    this.executions.set(key, this.executed(key) + 1);
    return d;
  }
}

export const BOTH: ProviderCapabilities = { idempotencyKey: true, statusLookup: true };
export const NEITHER: ProviderCapabilities = { idempotencyKey: false, statusLookup: false };
export const IDEMPOTENT: ProviderCapabilities = { idempotencyKey: true, statusLookup: false };
export const LOOKUP: ProviderCapabilities = { idempotencyKey: false, statusLookup: true };
