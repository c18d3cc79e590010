import { AsyncLocalStorage } from "node:async_hooks";
import { canonicalJson } from "../domain/canonical-json.js";
import { ErrorCode, QuiesceError, invalidInput } from "../domain/errors.js";
import { validateProviderName } from "../domain/journal-names.js";
import type {
  Ack,
  DispatchRequest,
  LookupAnswer,
  Provider,
  ProviderCapabilities,
} from "./provider.js";
import type { Run } from "./run.js";

/** Sends one call; what it returns is the acknowledgement, what it throws is "unknown". */
export type Send = (req: DispatchRequest) => Promise<Ack>;

/** The call being made right now in this async context: its key and how to send it. */
const live = new AsyncLocalStorage<{ key: string; send: Send }>();

export interface CallProviderOptions {
  /** The provider's name in the journal (`tool:sendInvoice`, `mcp`, `fetch`, `browser`). */
  name: string;
  /** The receiver honours the idempotency key: a call of unknown fate may be sent again. */
  idempotent?: boolean;
  /** What became of a key (recovery relies on it: "absent" must mean it never landed). */
  lookup?: (key: string, signal: AbortSignal) => Promise<LookupAnswer>;
  /**
   * Sends a call from its recorded request alone (recovery re-sends a PLANNED call with it).
   * Without it, recovery leaves PLANNED calls to the run's own code (a click on a live page
   * cannot be rebuilt from JSON), which sends them when it makes the same call again.
   */
  resend?: Send;
}

/**
 * A Provider over calls that an adapter makes (a tool's execute, an MCP callTool, a fetch, a
 * form submit). Its capabilities are only what the caller declared: an MCP tool's
 * `idempotentHint` or a page that reloads cleanly prove nothing.
 */
export class CallProvider implements Provider {
  readonly name: string;
  readonly capabilities: ProviderCapabilities;
  readonly lookup?: (key: string, signal: AbortSignal) => Promise<LookupAnswer>;
  readonly resendFromRecord: boolean;
  private readonly resend: Send | undefined;

  constructor(o: CallProviderOptions) {
    this.name = validateProviderName(o.name);
    if (o.idempotent !== undefined && typeof o.idempotent !== "boolean")
      throw invalidInput(`${o.name}: idempotent must be true or false`);
    if (o.lookup !== undefined && typeof o.lookup !== "function")
      throw invalidInput(`${o.name}: lookup must be a function (key, signal) => answer`);
    this.capabilities = { idempotencyKey: o.idempotent === true, statusLookup: !!o.lookup };
    if (o.lookup) this.lookup = o.lookup;
    this.resend = o.resend;
    this.resendFromRecord = o.resend !== undefined;
  }

  /** Sends from the recorded request alone (what recovery does). */
  sendFromRecord(req: DispatchRequest): Promise<Ack> {
    if (!this.resend)
      throw new QuiesceError(
        ErrorCode.INTERNAL,
        `${this.name}: effect ${req.key} can only be sent by the code that makes the call`,
      );
    return this.resend(req);
  }

  async dispatch(req: DispatchRequest): Promise<Ack> {
    const call = live.getStore();
    const ack = call?.key === req.key ? await call.send(req) : await this.sendFromRecord(req);
    req.sent(); // it has certainly left once it was answered
    return ack;
  }
}

export interface Call {
  key: string;
  provider: CallProvider;
  /** The JSON request recorded before anything is sent (the tool input, the URL and body). */
  request: unknown;
  /** What a reviewer needs to judge the call (tool name and input, page URL, identity). */
  context?: unknown;
  /** How this process sends it now. */
  send: Send;
}

/**
 * Makes a call once per run through the journal: the first call is planned, dispatched and
 * recorded; the same call again (an agent loop replayed after a crash) returns the recorded
 * result, or settles what the journal knows about it (a lookup, a quarantine), and never sends
 * a call the journal cannot prove unsent. One key with a different request is refused: a key
 * names one logical operation.
 */
export async function callOnce<T = unknown>(run: Run, c: Call): Promise<T> {
  run.host.providers.ensure(c.provider);
  const seen = run.records.get(c.key);
  if (seen) {
    if (seen.provider !== c.provider.name)
      throw invalidInput(
        `effect ${c.key} of run ${run.id} belongs to provider ${seen.provider}, not ${c.provider.name}`,
      );
    if (canonicalJson(JSON.parse(seen.request)) !== canonicalJson(c.request ?? null))
      throw invalidInput(
        `effect ${c.key} of run ${run.id} was recorded with a different request; one idempotency key names one logical operation`,
      );
    return live.run({ key: c.key, send: c.send }, () => run.outcome<T>(c.key));
  }
  return live.run({ key: c.key, send: c.send }, () =>
    run.effect<T>({
      key: c.key,
      provider: c.provider.name,
      request: c.request,
      ...(c.context !== undefined ? { context: c.context } : {}),
    }),
  );
}
