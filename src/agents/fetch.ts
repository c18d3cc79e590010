/**
 * quiesce/fetch: an HTTP side effect as a journal effect, with the `Idempotency-Key` header
 * (draft-ietf-httpapi-idempotency-key-header) and the provider's request id recorded.
 *
 *     const payments = fetchProvider({ name: "payments", lookup: (key) => askPayments(key) });
 *     const rt = await openRuntime({ id: "billing", providers: [payments] });
 *     const res = await withRun(run, () =>
 *       journaledFetch("invoice:8472:send", { url, method: "POST", json: invoice }, { provider: payments }));
 *
 * A timeout, a reset connection, a 5xx or a 429 is "unknown whether it landed", never "not
 * sent": the effect stays DISPATCHED and recovery looks it up or sends it to review.
 */
import { checkKey } from "../domain/canonical-json.js";
import { invalidInput } from "../domain/errors.js";
import { CallProvider, callOnce, type CallProviderOptions } from "../journal/call-effect.js";
import { resolveRun, type RunBinding } from "../journal/current-run.js";
import type { Ack, DispatchRequest, LookupAnswer } from "../journal/provider.js";

export { withRun, currentRun } from "../journal/current-run.js";

/** The request as recorded (JSON) before it is sent, and as a replay sends it again. */
export interface FetchRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  /** A text body, or `json` (sent as application/json). */
  body?: string;
  json?: unknown;
}

/** The recorded outcome: enough to rebuild the Response on replay. */
export interface RecordedResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: string;
}

export interface FetchProviderOptions extends Omit<CallProviderOptions, "resend" | "name"> {
  /** The provider's name in the journal (default "fetch"). */
  name?: string;
  /** Response headers that carry the provider's request id, first found wins. */
  requestIdHeaders?: readonly string[];
  /** Give up waiting after this long (the outcome is then unknown). Default 30 s. */
  timeoutMs?: number;
  /** The fetch to use (default: globalThis.fetch). */
  fetch?: typeof fetch;
}

const DEFAULT_ID_HEADERS = ["request-id", "x-request-id", "idempotency-key-request-id"];

/** A journal provider for HTTP effects; pass it to openRuntime so recovery can settle them. */
export function fetchProvider(o: FetchProviderOptions = {}): CallProvider {
  const p = new CallProvider({
    name: o.name ?? "fetch",
    ...(o.idempotent !== undefined ? { idempotent: o.idempotent } : {}),
    ...(o.lookup ? { lookup: asResponseLookup(o.lookup) } : {}),
    resend: (req: DispatchRequest) => sendHttp(req, o),
  });
  fetchProviders.add(p);
  return p;
}

const fetchProviders = new WeakSet<CallProvider>();
let defaultProvider: CallProvider | null = null;

/**
 * Sends `request` once per run under `key` and returns the Response (rebuilt from the record
 * when the run already has it). `key` names the logical operation: `invoice:8472:send`.
 */
export async function journaledFetch(
  key: string,
  request: FetchRequest | string,
  options: { provider?: CallProvider; run?: RunBinding; context?: unknown } = {},
): Promise<Response> {
  const k = checkKey(key, "journaledFetch");
  const req = normalize(request);
  const provider = options.provider ?? (defaultProvider ??= fetchProvider());
  if (!fetchProviders.has(provider))
    throw invalidInput("journaledFetch: options.provider must come from fetchProvider()");
  const run = resolveRun(options.run, `journaledFetch ${k}`);
  const recorded = await callOnce<RecordedResponse>(run, {
    key: k,
    provider,
    request: req,
    context: options.context ?? { method: req.method, url: req.url },
    send: (d) => provider.sendFromRecord(d),
  });
  return new Response(nullBody(recorded.status) ? null : recorded.body, {
    status: recorded.status,
    statusText: recorded.statusText,
    headers: recorded.headers,
  });
}

function normalize(
  r: FetchRequest | string,
): Required<Pick<FetchRequest, "url" | "method">> & FetchRequest {
  const o: FetchRequest = typeof r === "string" ? { url: r } : r;
  if (typeof o?.url !== "string" || o.url === "")
    throw invalidInput("journaledFetch: the request needs a url (a string)");
  try {
    new URL(o.url);
  } catch {
    throw invalidInput(`journaledFetch: "${o.url}" is not an absolute URL`);
  }
  if (o.body !== undefined && o.json !== undefined)
    throw invalidInput("journaledFetch: give body or json, not both");
  const method = o.method ?? (o.body !== undefined || o.json !== undefined ? "POST" : "GET");
  return { ...o, method: method.toUpperCase() };
}

async function sendHttp(d: DispatchRequest, o: FetchProviderOptions): Promise<Ack> {
  const r = d.request as FetchRequest & { method: string };
  const headers = new Headers(r.headers ?? {});
  headers.set("Idempotency-Key", `"${d.key}"`);
  let body = r.body;
  if (r.json !== undefined) {
    body = JSON.stringify(r.json);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  const signal = AbortSignal.any([d.signal, AbortSignal.timeout(o.timeoutMs ?? 30_000)]);
  // Whatever goes wrong from here (timeout, reset, DNS, abort) is thrown: unknown, not "not sent".
  const res = await (o.fetch ?? fetch)(r.url, {
    method: r.method,
    headers,
    body: body ?? null,
    signal,
  });
  const text = await res.text();
  if (res.status >= 500 || res.status === 429)
    throw new Error(
      `${r.method} ${r.url} answered HTTP ${res.status}: it may or may not have been done`,
    );
  const names = o.requestIdHeaders ?? DEFAULT_ID_HEADERS;
  const requestId = names.map((h) => res.headers.get(h)).find((v) => v) ?? null;
  const result: RecordedResponse = {
    status: res.status,
    statusText: res.statusText,
    headers: Object.fromEntries(res.headers),
    body: text,
  };
  return { requestId, result };
}

/**
 * A lookup says what the provider knows (`{ status: "observed", result: invoice }`); what the
 * run gets back is a Response: a result that is not a recorded response becomes a 200 JSON one.
 */
function asResponseLookup(lookup: NonNullable<FetchProviderOptions["lookup"]>) {
  return async (key: string, signal: AbortSignal): Promise<LookupAnswer> => {
    const a = await lookup(key, signal);
    if (a.status !== "observed" || isRecordedResponse(a.result)) return a;
    return {
      ...a,
      result: {
        status: 200,
        statusText: "OK",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(a.result ?? null),
      } satisfies RecordedResponse,
    };
  };
}

function isRecordedResponse(v: unknown): v is RecordedResponse {
  const r = v as Partial<RecordedResponse> | null;
  return (
    typeof r?.status === "number" && typeof r.body === "string" && typeof r.headers === "object"
  );
}

function nullBody(status: number): boolean {
  return status === 204 || status === 205 || status === 304;
}
