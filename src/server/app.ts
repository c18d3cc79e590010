import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { MAX_BODY_BYTES } from "./body.js";
import type { ServerContext } from "./context.js";
import { errorResponse, HttpError } from "./http-errors.js";
import { dashboardRoutes } from "./routes/dashboard.js";
import { eventRoutes } from "./routes/events.js";
import { leaseRoutes } from "./routes/leases.js";
import { opsRoutes } from "./routes/ops.js";
import { runRoutes } from "./routes/runs.js";
import { runtimeRoutes } from "./routes/runtimes.js";
import { waveRoutes } from "./routes/waves.js";

/** The HTTP application: the JSON API, /metrics, /healthz and the dashboard. */
export function createApp(ctx: ServerContext): Hono {
  const app = new Hono();
  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new HttpError(413, `the request body is larger than ${MAX_BODY_BYTES} bytes`);
      },
    }),
  );
  app.use("*", async (c, next) => {
    await next();
    // Set on the response's own headers, as hono's secureHeaders does: c.header() after the
    // handler has answered rebuilds the response around a stream of its body, which then goes
    // out through web streams instead of one write (/metrics with 10,000 leases is 900 KB).
    c.res.headers.set("x-content-type-options", "nosniff");
    c.res.headers.set("referrer-policy", "no-referrer");
  });
  for (const routes of [
    opsRoutes,
    leaseRoutes,
    eventRoutes,
    runRoutes,
    waveRoutes,
    runtimeRoutes,
    dashboardRoutes,
  ])
    app.route("/", routes(ctx));
  app.notFound((c) => c.json({ error: `no such endpoint: ${c.req.method} ${c.req.path}` }, 404));
  app.onError((e, c) => errorResponse(c, e));
  return app;
}
