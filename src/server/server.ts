import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { invalidInput } from "../domain/errors.js";
import type { Leases } from "../lease/leases.js";
import { createApp } from "./app.js";
import type { ServerContext } from "./context.js";
import { DashboardFeed } from "./dashboard/feed.js";
import { EventHub } from "./event-hub.js";
import { LeaseMirror } from "./lease-mirror.js";
import { ServerMetrics } from "./metrics.js";
import { checkExposure, type ListenAddress } from "./serve-options.js";

export interface ServeOptions {
  leases: Leases;
  listen: ListenAddress;
  /** The operators' token (read with readTokenFile); null: read-only. */
  token: string | null;
  /** `check`'s --max-hold for the verdict (null: no limit). */
  maxHoldMs: number | null;
  /** How often the event log is read for the streams (default 500 ms). */
  tickMs?: number;
}

export interface RunningServer {
  url: string;
  address: AddressInfo;
  /** Ends the open streams, stops listening and waits for requests in flight. Idempotent. */
  close(): Promise<void>;
}

/**
 * `quiesce serve` as a library call: binds, starts the one event reader, and serves until
 * closed. Listening beyond loopback without a token is refused before anything binds.
 */
export async function startServer(o: ServeOptions): Promise<RunningServer> {
  checkExposure(o.listen, o.token);
  const store = o.leases.store;
  const shutdown = new AbortController();
  const hub = new EventHub(store, o.tickMs);
  await hub.start();
  const mirror = new LeaseMirror(store);
  const ctx: ServerContext = {
    store,
    leases: o.leases,
    token: o.token,
    maxHoldMs: o.maxHoldMs,
    hub,
    feed: new DashboardFeed(store, hub, { maxHoldMs: o.maxHoldMs, mirror }),
    metrics: new ServerMetrics(store, o.maxHoldMs, mirror),
    mirror,
    shutdown: shutdown.signal,
  };
  const app = createApp(ctx);
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: o.listen.host, port: o.listen.port }, () =>
      resolve(s),
    );
    s.once("error", (e: NodeJS.ErrnoException) =>
      reject(
        invalidInput(
          `--listen ${o.listen.host}:${o.listen.port}: ${e.code === "EADDRINUSE" ? "the address is already in use" : e.message}`,
        ),
      ),
    );
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${address.port}`,
    address,
    close: () =>
      (closing ??= (async () => {
        shutdown.abort();
        hub.stop();
        ctx.feed.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          // Streams end on the abort above; idle keep-alive sockets must not hold the exit.
          if ("closeIdleConnections" in server) server.closeIdleConnections();
        });
      })()),
  };
}
