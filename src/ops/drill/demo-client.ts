import http from "node:http";
import type {
  Ack,
  DispatchRequest,
  LookupAnswer,
  Provider,
  ProviderCapabilities,
} from "../../journal/provider.js";

/**
 * The demo agent's Provider for the drill's DemoProvider: POST /effects with the idempotency
 * key; GET /effects/KEY as the status lookup. Capabilities are what the provider declares on
 * GET /capabilities (the drill switches them off with `--provider none`).
 */
export async function demoProviderClient(baseUrl: string): Promise<Provider> {
  const caps = await demoCapabilities(baseUrl);
  const provider: Provider = {
    name: "demo",
    capabilities: caps,
    dispatch: (req) => post(baseUrl, req),
  };
  if (caps.statusLookup) provider.lookup = (key) => lookupEffect(baseUrl, key);
  return provider;
}

/** What the demo provider declares (the drill's `--provider full|none`). */
export async function demoCapabilities(baseUrl: string): Promise<ProviderCapabilities> {
  const caps = (await getJson(`${baseUrl}/capabilities`)).body as ProviderCapabilities;
  return { idempotencyKey: caps.idempotencyKey, statusLookup: caps.statusLookup };
}

/** The demo provider's status lookup by idempotency key. */
export async function lookupEffect(baseUrl: string, key: string): Promise<LookupAnswer> {
  const r = await getJson(`${baseUrl}/effects/${encodeURIComponent(key)}`);
  const b = r.body as { status?: string; requestId?: string; result?: unknown };
  if (r.status === 404 && b.status === "absent") return { status: "absent" };
  if (r.status !== 200) throw new Error(`lookup of ${key} failed with HTTP ${r.status}`);
  return b.status === "observed"
    ? { status: "observed", requestId: b.requestId ?? null, result: b.result }
    : { status: "acknowledged", requestId: b.requestId ?? null };
}

/** One POST /effects (what a framework agent's tool does): the provider's answer. */
export async function postEffect(
  baseUrl: string,
  key: string,
  request: unknown,
  signal: AbortSignal,
): Promise<{ requestId: string; status?: string; result?: unknown }> {
  const ack = await post(baseUrl, { key, request, attempt: 1, signal, sent: () => undefined });
  return ack.pending
    ? { requestId: ack.requestId!, status: "accepted" }
    : { requestId: ack.requestId!, result: ack.result };
}

function post(baseUrl: string, d: DispatchRequest): Promise<Ack> {
  const body = JSON.stringify({ key: d.key, request: d.request });
  return new Promise<Ack>((resolve, reject) => {
    const req = http.request(`${baseUrl}/effects`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": d.key },
      signal: d.signal,
      // A connection of its own: one kept alive from an earlier request may be closed by the
      // provider just as this one is written on it, and the request is then lost unseen; the
      // drill kills the agent right after sent() and would take that for a lookup's case.
      agent: false,
    });
    req.on("response", (res) => {
      let s = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (s += c));
      res.on("end", () => {
        if (res.statusCode !== 200 && res.statusCode !== 202) {
          reject(new Error(`provider answered HTTP ${res.statusCode}`));
          return;
        }
        const b = JSON.parse(s) as { requestId: string; status?: string; result?: unknown };
        resolve(
          b.status === "accepted"
            ? { requestId: b.requestId, pending: true }
            : { requestId: b.requestId, result: b.result },
        );
      });
    });
    req.on("error", reject);
    // The request has left this process once it is flushed to the socket.
    req.end(body, () => d.sent());
  });
}

function getJson(url: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let s = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (s += c));
        res.on("end", () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(s) as unknown });
          } catch (e) {
            reject(e instanceof Error ? e : new Error(`bad JSON from ${url}`));
          }
        });
      })
      .on("error", reject);
  });
}

export async function fetchJobs(baseUrl: string): Promise<string[]> {
  return ((await getJson(`${baseUrl}/jobs`)).body as { jobs: string[] }).jobs;
}
