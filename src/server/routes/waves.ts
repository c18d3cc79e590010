import { Hono } from "hono";
import { z } from "zod";
import { validateMaintenanceId } from "../../domain/journal-names.js";
import { drainTimeout } from "../../domain/maintenance-policy.js";
import { validateWaveName } from "../../domain/wave-input.js";
import { stopWave } from "../../wave/stop-wave.js";
import { listWaves, waveStatus } from "../../wave/wave-status.js";
import { requireToken } from "../auth.js";
import { operatorField, readBody } from "../body.js";
import type { ServerContext } from "../context.js";
import { notFound } from "../http-errors.js";

const StopBody = z.strictObject({
  operator: operatorField,
  id: z.string({ error: "id: a maintenance id such as wave-stop-1" }).optional(),
  drainTimeout: z.string({ error: 'drainTimeout: a duration such as "5m"' }).optional(),
});

/** `wave status` and `wave stop`, over HTTP, in the same shapes. */
export function waveRoutes(ctx: ServerContext): Hono {
  const app = new Hono();

  app.get("/api/waves", async (c) => c.json(await listWaves(ctx.store)));

  app.get("/api/waves/:name", async (c) => {
    const name = await existingWave(ctx, c.req.param("name"));
    return c.json(await waveStatus(ctx.store, name));
  });

  app.post("/api/waves/:name/stop", requireToken(ctx.token), async (c) => {
    const name = await existingWave(ctx, c.req.param("name"));
    const b = await readBody(c, StopBody);
    if (b.id !== undefined) validateMaintenanceId(b.id, "id");
    const r = await stopWave(ctx.store, {
      wave: name,
      ...(b.id !== undefined ? { maintenanceId: b.id } : {}),
      drainTimeoutMs:
        b.drainTimeout === undefined ? null : drainTimeout(b.drainTimeout, "drainTimeout"),
      by: b.operator,
    });
    if (r.status === "never_run" || r.status === "not_running")
      return c.json({
        wave: name,
        status: "not_running",
        message:
          r.status === "never_run" ? r.message : `wave ${name} is not running (${r.message})`,
      });
    return c.json({
      wave: name,
      status: r.status,
      maintenanceId: r.runtime.request?.maintenanceId ?? r.runtime.maintenanceId,
    });
  });

  return app;
}

async function existingWave(ctx: ServerContext, raw: string): Promise<string> {
  const name = validateWaveName(raw);
  const { wave } = await ctx.store.waves.getWave(name);
  if (!wave) throw notFound(`no wave named ${name}`);
  return name;
}
