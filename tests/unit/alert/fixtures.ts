import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Alert } from "../../../src/domain/alert.js";

/** A takeover alert as the lead's code will raise it; every field is exercised. */
export function sampleAlert(extra: Partial<Alert> = {}): Alert {
  return {
    kind: "lease.taken_over",
    severity: "critical",
    scope: "host:db-7",
    token: 43,
    summary: "took over host:db-7 from run r-1 on db-7: pid 4121 is gone",
    at: "2024-01-02T03:04:05.000Z",
    reporter: "db-8",
    detail: { previousOwner: { runId: "r-1", pid: 4121 }, evidence: ["pid 4121 is gone"] },
    ...extra,
  };
}

/** Rejects if `p` has not settled within `ms`: a guard so a broken sink fails, not hangs. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([p, guard]).finally(() => clearTimeout(timer));
}

/** How the server answers one request: a status code, or never (the request hangs). */
export type Reply = number | "hang";

export interface Received {
  method: string;
  contentType: string | undefined;
  body: string;
  /** Resolves when the client gave up on (or finished) the request. */
  closed: Promise<void>;
}

export interface LocalServer {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1 at a random port. The n-th request gets `replies[n]` (the
 * last one repeats). Everything the client sent is kept for exact assertions.
 */
export async function startLocalServer(replies: readonly Reply[]): Promise<LocalServer> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const reply = replies[Math.min(received.length, replies.length - 1)] ?? 204;
    const closed = new Promise<void>((resolve) => res.once("close", () => resolve()));
    const entry: Received = {
      method: req.method ?? "",
      contentType: req.headers["content-type"],
      body: "",
      closed,
    };
    received.push(entry);
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (entry.body += chunk));
    req.on("end", () => {
      if (reply === "hang") return;
      // A redirect points back at this server, so following it would show up as a request.
      res.writeHead(reply, reply >= 300 && reply < 400 ? { location: "/elsewhere" } : {}).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/secret-token`,
    received,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port that refuses connections: bound once to pick it, then closed. */
export async function refusedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
