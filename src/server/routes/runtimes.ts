import { Hono } from "hono";
import { z } from "zod";
import { validateMaintenanceId, validateRuntimeId } from "../../domain/journal-names.js";
import { drainTimeout } from "../../domain/maintenance-policy.js";
import { runtimeStatus, startMaintenance } from "../../runtime/maintenance.js";
import { requireToken } from "../auth.js";
import { operatorField, readBody } from "../body.js";
import type { ServerContext } from "../context.js";
import { notFound } from "../http-errors.js";

const MaintenanceBody = z.strictObject({
  operator: operatorField,
  runtime: z.string({ error: "runtime: the runtime id to drain" }),
  id: z.string({ error: "id: this maintenance window's id, e.g. mw-2024-06-01" }),
  drainTimeout: z.string({ error: 'drainTimeout: a duration such as "90s"' }).optional(),
});

/** `maintenance status` and `maintenance start`, over HTTP, in the same shapes. */
export function runtimeRoutes(ctx: ServerContext): Hono {
  const app = new Hono();

  app.get("/api/runtimes", async (c) => {
    const { runtimes } = await ctx.store.journal.listRuntimes();
    return c.json({
      runtimes: await Promise.all(runtimes.map((r) => runtimeStatus(ctx.store, r))),
    });
  });

  app.get("/api/runtimes/:id", async (c) => {
    const id = validateRuntimeId(c.req.param("id"), "runtime");
    const { runtime } = await ctx.store.journal.getRuntime(id);
    if (!runtime) throw notFound(`no runtime named ${id}`);
    return c.json(await runtimeStatus(ctx.store, runtime));
  });

  app.post("/api/maintenance", requireToken(ctx.token), async (c) => {
    const b = await readBody(c, MaintenanceBody);
    const runtimeId = validateRuntimeId(b.runtime, "runtime");
    validateMaintenanceId(b.id, "id");
    const drainMs =
      b.drainTimeout === undefined ? null : drainTimeout(b.drainTimeout, "drainTimeout");
    if (!(await ctx.store.journal.getRuntime(runtimeId)).runtime)
      throw notFound(`no runtime named ${runtimeId}`);
    const r = await startMaintenance(ctx.store, {
      runtimeId,
      maintenanceId: b.id,
      drainTimeoutMs: drainMs,
      by: b.operator,
    });
    return c.json({
      status: r.status,
      ...(r.status === "not_running" ? { message: r.message } : {}),
      runtime: await runtimeStatus(ctx.store, r.runtime),
    });
  });

  return app;
}
