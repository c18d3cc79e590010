/**
 * quiesce/mcp: an MCP SDK client whose `callTool` goes through the journal of the current run.
 *
 *     const client = journaledMcpClient(mcpClient, {
 *       name: "billing-mcp",
 *       key: (tool, args) => `invoice:${args.id}:${tool}`,
 *     });
 *     const rt = await openRuntime({ id: "billing", providers: [client.quiesceProvider] });
 *     await withRun(run, () => client.callTool({ name: "send_invoice", arguments: { id: "8472" } }));
 *
 * The key travels to the server in `_meta["quiesce/idempotency-key"]`. A tool's annotations
 * (`idempotentHint`, `readOnlyHint`) are the server's hints, never a proof: only what is
 * declared here (`idempotent`, `lookup`) changes what recovery may do. Types only from the SDK.
 */
import { checkKey, derivedKey } from "../domain/canonical-json.js";
import { invalidInput } from "../domain/errors.js";
import { CallProvider, callOnce } from "../journal/call-effect.js";
import { resolveRun, type RunBinding } from "../journal/current-run.js";
import type { Ack, DispatchRequest, LookupAnswer, Provider } from "../journal/provider.js";

export { withRun, currentRun } from "../journal/current-run.js";

/** Where the idempotency key goes in a tools/call request. */
export const MCP_KEY_META = "quiesce/idempotency-key";

interface CallParams {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** The part of the SDK's Client this wraps. */
export interface McpClientLike {
  callTool(params: CallParams, resultSchema?: never, options?: never): Promise<unknown>;
}

export interface JournaledMcpOptions {
  /** The provider's name in the journal (default "mcp"); one per server. */
  name?: string;
  /** The logical operation of a call. Default: the tool's name and a hash of its arguments. */
  key?: (tool: string, args: Record<string, unknown>) => string;
  /** The server honours the key: an unacknowledged call may be sent again. */
  idempotent?: boolean;
  /** What became of a key; recovery relies on it ("absent" must mean it never landed). */
  lookup?: (key: string, signal: AbortSignal) => Promise<LookupAnswer>;
  /** The server's own id for the call, read from its result. */
  requestId?: (result: unknown) => string | null | undefined;
  run?: RunBinding;
}

export type JournaledMcpClient<C> = C & { readonly quiesceProvider: Provider };

/**
 * `client` with `callTool` journaled (planned and dispatched durably before the request, the
 * result recorded, a replayed call answered from the record); everything else passes through.
 */
export function journaledMcpClient<C extends McpClientLike>(
  client: C,
  options: JournaledMcpOptions = {},
): JournaledMcpClient<C> {
  if (typeof client?.callTool !== "function")
    throw invalidInput("journaledMcpClient: the client has no callTool method (an MCP SDK Client)");
  if (options.key !== undefined && typeof options.key !== "function")
    throw invalidInput("journaledMcpClient: key must be a function (tool, args) => string");
  const original = client.callTool.bind(client) as (
    p: CallParams,
    schema?: unknown,
    opts?: Record<string, unknown>,
  ) => Promise<unknown>;
  const send = async (d: DispatchRequest, schema?: unknown, opts?: Record<string, unknown>) => {
    const p = d.request as CallParams;
    const result = await original({ ...p, _meta: { ...p._meta, [MCP_KEY_META]: d.key } }, schema, {
      ...opts,
      signal: opts?.signal ? AbortSignal.any([opts.signal as AbortSignal, d.signal]) : d.signal,
    });
    return { requestId: options.requestId?.(result) ?? null, result: result ?? null } satisfies Ack;
  };
  const provider = new CallProvider({
    name: options.name ?? "mcp",
    ...(options.idempotent !== undefined ? { idempotent: options.idempotent } : {}),
    ...(options.lookup ? { lookup: options.lookup } : {}),
    resend: (d) => send(d),
  });
  const callTool = async (params: CallParams, schema?: unknown, opts?: Record<string, unknown>) => {
    if (typeof params?.name !== "string" || params.name === "")
      throw invalidInput("callTool: params.name (the tool's name) is required");
    const args = params.arguments ?? {};
    const run = resolveRun(options.run, `MCP tool ${params.name}`);
    const key = options.key
      ? checkKey(options.key(params.name, args), `MCP tool ${params.name}`)
      : derivedKey(`${provider.name}:${params.name}`, args);
    const request: CallParams = { name: params.name, arguments: args };
    return callOnce(run, {
      key,
      provider,
      request,
      context: { server: provider.name, tool: params.name, arguments: args },
      send: (d) => send(d, schema, opts),
    });
  };
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === "callTool") return callTool;
      if (prop === "quiesceProvider") return provider;
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  }) as JournaledMcpClient<C>;
}
