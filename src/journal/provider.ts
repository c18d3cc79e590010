import { invalidInput } from "../domain/errors.js";
import { validateProviderName } from "../domain/journal-names.js";
import type { LookupAnswer, ProviderCapabilities } from "../domain/recovery.js";

export type { LookupAnswer, ProviderCapabilities };

/** What `dispatch` is given. The request is the JSON value recorded when the effect was planned. */
export interface DispatchRequest {
  /** The idempotency key: the same for every attempt of this logical operation. */
  key: string;
  request: unknown;
  /** 1 for the first dispatch; more when an idempotent provider is asked again. */
  attempt: number;
  /** Aborts when the run must stop waiting (lease lost, drain deadline). */
  signal: AbortSignal;
  /** Call once the request has left this process (e.g. the HTTP request is written). */
  sent(): void;
}

/**
 * The provider's answer. `pending: true`: it accepted the request and the outcome comes later
 * (read it with `lookup`). Otherwise `result` (possibly null) is the outcome.
 */
export interface Ack {
  requestId: string | null;
  result?: unknown;
  pending?: boolean;
}

/**
 * A side-effect provider (payments, email, a browser, git push). It declares what it can do;
 * recovery relies on exactly that (I9):
 * - `idempotencyKey`: a second request with the same key does nothing new, so a request whose
 *   fate is unknown may be sent again with it;
 * - `statusLookup`: `lookup(key)` says what became of a key. It must report a request it has
 *   received as at least "acknowledged": "absent" is taken as proof it never landed.
 * `dispatch` throwing means "unknown whether it landed"; a definite refusal is an Ack whose
 * result says so.
 */
export interface Provider {
  readonly name: string;
  readonly capabilities: ProviderCapabilities;
  dispatch(req: DispatchRequest): Promise<Ack>;
  lookup?(key: string, signal: AbortSignal): Promise<LookupAnswer>;
  /**
   * False: the recorded request is not enough to send it (a click on a live page): recovery
   * leaves a PLANNED effect to the run's own code instead of dispatching it. Default true.
   */
  readonly resendFromRecord?: boolean;
}

/** The providers a process can send through, by name (recovery needs them to replay). */
export class ProviderRegistry {
  private readonly byName = new Map<string, Provider>();

  constructor(providers: readonly Provider[] = []) {
    for (const p of providers) this.register(p);
  }

  register(p: Provider): void {
    validateProviderName(p.name);
    const c = p.capabilities as Partial<ProviderCapabilities> | undefined;
    if (typeof c?.idempotencyKey !== "boolean" || typeof c.statusLookup !== "boolean")
      throw invalidInput(
        `provider ${p.name}: capabilities must declare idempotencyKey and statusLookup (true or false)`,
      );
    if (c.statusLookup && typeof p.lookup !== "function")
      throw invalidInput(`provider ${p.name}: declares statusLookup but has no lookup()`);
    if (this.byName.has(p.name)) throw invalidInput(`provider ${p.name} is registered twice`);
    this.byName.set(p.name, p);
  }

  /** Registers `p` unless this very provider is registered already (an adapter's first call). */
  ensure(p: Provider): void {
    const known = this.byName.get(p.name);
    if (known === p) return;
    if (known)
      throw invalidInput(
        `another provider named "${p.name}" is registered; give each journaled tool or client its own name`,
      );
    this.register(p);
  }

  get(name: string): Provider | null {
    return this.byName.get(name) ?? null;
  }

  require(name: string): Provider {
    const p = this.get(name);
    if (!p)
      throw invalidInput(
        `no provider named "${name}" is registered (known: ${[...this.byName.keys()].join(", ") || "none"})`,
      );
    return p;
  }
}
