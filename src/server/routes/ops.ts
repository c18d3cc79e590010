import { Hono } from "hono";
import { runCheck } from "../../ops/check.js";
import { checkJson } from "../../ops/check-output.js";
import type { ServerContext } from "../context.js";
import { scrubSecrets } from "../http-errors.js";

/** A store that does not answer within this is down, as far as /healthz is concerned. */
const HEALTH_TIMEOUT_MS = 3000;

/** /healthz, /api/check and /metrics. */
export function opsRoutes(ctx: ServerContext): Hono {
  const app = new Hono();

  app.get("/healthz", async (c) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const now = await Promise.race([
        ctx.store.now(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`the store did not answer within ${HEALTH_TIMEOUT_MS} ms`)),
            HEALTH_TIMEOUT_MS,
          );
        }),
      ]);
      return c.json({
        ok: true,
        backend: ctx.store.backend,
        storeNow: new Date(now).toISOString(),
      });
    } catch (e) {
      return c.json(
        { ok: false, backend: ctx.store.backend, error: scrubSecrets((e as Error).message) },
        503,
      );
    } finally {
      clearTimeout(timer);
    }
  });

  // The same report as `quiesce check --format json` (the check only reads).
  app.get("/api/check", async (c) =>
    c.json(
      checkJson(await runCheck(ctx.store, { maxHoldMs: ctx.maxHoldMs, windowMs: 86_400_000 })),
    ),
  );

  app.get("/metrics", async (c) => {
    // As bytes: a string body this large (900 KB with 10,000 leases) is glued to the headers
    // and encoded again inside the socket write, which cost more than Buffer.from.
    const text = Buffer.from(await ctx.metrics.render());
    return c.body(text, 200, { "content-type": ctx.metrics.registry.contentType });
  });

  return app;
}
