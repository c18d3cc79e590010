import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { ServerContext } from "../context.js";
import { renderPage } from "../dashboard/page.js";
import { renderSections } from "../dashboard/sections.js";
import { gatherSnapshot } from "../dashboard/snapshot.js";
import { scrubSecrets } from "../http-errors.js";

/** The assets ship inside the package (dist/src/server/dashboard/), read once at start. */
function asset(path: string): string {
  return readFileSync(fileURLToPath(new URL(`../dashboard/${path}`, import.meta.url)), "utf8");
}

const KEEPALIVE_MS = 15_000;

/** The dashboard page, its live stream and its two assets. */
export function dashboardRoutes(ctx: ServerContext): Hono {
  const app = new Hono();
  const css = asset("assets/dashboard.css");
  const js = asset("client/dashboard.js");
  const headers = (type: string) => ({ "content-type": type, "cache-control": "no-cache" });
  const page = {
    location: ctx.store.location,
    backend: ctx.store.backend,
    writable: ctx.token !== null,
  };

  app.get("/", async (c) => {
    c.header("content-security-policy", "default-src 'self'; style-src 'self' 'unsafe-inline'");
    try {
      const snap = await gatherSnapshot(ctx.store, {
        maxHoldMs: ctx.maxHoldMs,
        readLeases: () => ctx.mirror.listLeases(),
      });
      return c.html(renderPage({ ...page, sections: renderSections(snap), down: null }));
    } catch (e) {
      const down = scrubSecrets((e as Error).message);
      return c.html(renderPage({ ...page, sections: null, down }), 503);
    }
  });

  app.get("/assets/dashboard.css", (c) => c.body(css, 200, headers("text/css; charset=utf-8")));
  app.get("/assets/dashboard.js", (c) =>
    c.body(js, 200, headers("text/javascript; charset=utf-8")),
  );

  app.get("/dashboard/stream", (c) =>
    streamSSE(c, async (stream) => {
      let chain = Promise.resolve();
      const off = ctx.feed.add({
        send: (event, data) => {
          chain = chain.then(() => stream.writeSSE({ event, data }));
        },
      });
      const keepalive = setInterval(() => void stream.write(": keep-alive\n\n"), KEEPALIVE_MS);
      try {
        await stream.write("retry: 2000\n\n");
        await new Promise<void>((resolve) => {
          stream.onAbort(resolve);
          ctx.shutdown.addEventListener("abort", () => resolve(), { once: true });
        });
      } finally {
        clearInterval(keepalive);
        off();
        await chain.catch(() => undefined);
      }
    }),
  );

  return app;
}
