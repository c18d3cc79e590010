import http from "node:http";
import type { AddressInfo } from "node:net";

/** `full`: honours idempotency keys and answers status lookups; `none`: neither. */
export type ProviderMode = "full" | "none";

interface Delivery {
  requestId: string;
  result: { charged: number; key: string; requestId: string };
}

/**
 * A small side-effect provider on 127.0.0.1 (random port) for the drill: a "payment" per
 * idempotency key. It counts what matters for the at-most-once proof:
 * - `executions[key]`: how many times the side effect really happened;
 * - `requests[key]`: how many requests carried the key (a replay shows up here).
 * It also serves the drill's job list (`GET /jobs`), and can hold a key's response back
 * (the side effect happens at once; the acknowledgement waits) to keep a run in flight.
 */
export class DemoProvider {
  readonly executions = new Map<string, number>();
  readonly requests = new Map<string, number>();
  /** Status lookups per key (a recovery by lookup shows up here). */
  readonly lookups = new Map<string, number>();
  private readonly delivered = new Map<string, Delivery>();
  private readonly held = new Map<string, (() => void)[]>();
  private readonly holdKeys = new Set<string>();
  private jobs: string[] = [];
  private server: http.Server | null = null;
  private nextId = 1;
  url = "";

  constructor(readonly mode: ProviderMode) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Offers a job to the agent (it polls GET /jobs). */
  addJob(job: string): void {
    this.jobs.push(job);
  }

  /** The key's next request executes at once but is answered only on release(). */
  hold(key: string): void {
    this.holdKeys.add(key);
  }

  release(key: string): void {
    this.holdKeys.delete(key);
    for (const go of this.held.get(key) ?? []) go();
    this.held.delete(key);
  }

  executed(key: string): number {
    return this.executions.get(key) ?? 0;
  }

  /** The provider's own request id for a key it executed (what a reviewer would look up). */
  requestIdOf(key: string): string | null {
    return this.delivered.get(key)?.requestId ?? null;
  }

  lookedUp(key: string): number {
    return this.lookups.get(key) ?? 0;
  }

  requested(key: string): number {
    return this.requests.get(key) ?? 0;
  }

  async close(): Promise<void> {
    for (const key of [...this.held.keys()]) this.release(key);
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  /**
   * Executes the key's side effect (once per key in `full` mode: it honours the key) and holds
   * the answer while the key is held; null when the caller went away meanwhile.
   */
  private async deliver(
    key: string,
    amount: number,
    res: http.ServerResponse,
  ): Promise<Delivery | null> {
    this.requests.set(key, this.requested(key) + 1);
    const seen = this.delivered.get(key);
    let d: Delivery;
    if (seen && this.mode === "full") {
      d = seen; // the idempotency key: a repeat does nothing new
    } else {
      const requestId = `req-${this.nextId++}`;
      d = { requestId, result: { charged: amount, key, requestId } };
      this.delivered.set(key, d);
      this.executions.set(key, this.executed(key) + 1);
    }
    if (this.holdKeys.has(key))
      await new Promise<void>((resolve) =>
        this.held.set(key, [...(this.held.get(key) ?? []), resolve]),
      );
    return res.destroyed ? null : d;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "GET" && url.pathname === "/capabilities")
      return send(200, {
        idempotencyKey: this.mode === "full",
        statusLookup: this.mode === "full",
      });
    if (req.method === "GET" && url.pathname === "/jobs") return send(200, { jobs: this.jobs });
    if (req.method === "GET" && url.pathname.startsWith("/effects/")) {
      if (this.mode !== "full") return send(501, { error: "this provider has no status lookup" });
      const key = decodeURIComponent(url.pathname.slice("/effects/".length));
      this.lookups.set(key, this.lookedUp(key) + 1);
      const d = this.delivered.get(key);
      return d
        ? send(200, { status: "observed", requestId: d.requestId, result: d.result })
        : send(404, { status: "absent" });
    }
    if (req.method === "POST" && url.pathname === "/effects") {
      const body = JSON.parse(await readBody(req)) as { key: string; request: { amount?: number } };
      const d = await this.deliver(body.key, body.request.amount ?? 0, res);
      if (!d) return;
      return this.mode === "full"
        ? send(202, { requestId: d.requestId, status: "accepted" })
        : send(200, { requestId: d.requestId, result: d.result });
    }
    // The browser drill's shop: a checkout form, and its submit counted like any effect.
    if (req.method === "GET" && url.pathname === "/checkout") {
      const job = (url.searchParams.get("job") ?? "").replace(/[^A-Za-z0-9-]/g, "");
      res.writeHead(200, { "content-type": "text/html", "set-cookie": "user=drill-shopper" });
      return void res.end(checkoutPage(job));
    }
    if (req.method === "POST" && url.pathname === "/checkout") {
      const form = new URLSearchParams(await readBody(req));
      const d = await this.deliver(form.get("key") ?? "", Number(form.get("amount") ?? 0), res);
      if (!d) return;
      res.writeHead(200, { "content-type": "text/html", "x-request-id": d.requestId });
      return void res.end(`<p id="done">Order ${d.requestId} placed.</p>`);
    }
    send(404, { error: `no route ${req.method ?? ""} ${url.pathname}` });
  }
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let s = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (s += c));
    req.on("end", () => resolve(s));
    req.on("error", reject);
  });
}

function checkoutPage(job: string): string {
  return `<!doctype html><title>Checkout</title><main><h1>Checkout, job ${job}</h1>
<form method="post" action="/checkout"><input type="hidden" name="job" value="${job}">
<label>Order reference <input id="key" name="key"></label>
<label>Amount <input name="amount" value="5"></label>
<button id="place" type="submit">Place order</button></form></main>`;
}
