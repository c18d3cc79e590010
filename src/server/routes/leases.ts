import { Hono } from "hono";
import { z } from "zod";
import { validateScope } from "../../domain/names.js";
import { breakLease } from "../../lease/break-lease.js";
import { iso, leaseClockText, leaseJson } from "../../lease/lease-json.js";
import { requireToken } from "../auth.js";
import { operatorField, readBody, reasonField } from "../body.js";
import type { ServerContext } from "../context.js";
import { HttpError, notFound } from "../http-errors.js";
import { leaseTextList } from "../json-list.js";

const BreakBody = z.strictObject({
  operator: operatorField,
  reason: reasonField,
  force: z.boolean({ error: "force: true or false" }).optional(),
  foreign: z.boolean({ error: "foreign: true or false" }).optional(),
  dryRun: z.boolean({ error: "dryRun: true or false" }).optional(),
});

/** `lock list`, `lock show` and `lock break`, over HTTP, in the same shapes. */
export function leaseRoutes(ctx: ServerContext): Hono {
  const app = new Hono();

  app.get("/api/leases", async (c) => {
    const { texts, now } = await ctx.mirror.read();
    const nowText = JSON.stringify(iso(now));
    return leaseTextList(c, { storeNow: iso(now) }, "leases", texts, (t) =>
      leaseClockText(t.lease, now, nowText),
    );
  });

  app.get("/api/leases/:scope", async (c) => {
    const scope = validateScope(c.req.param("scope"), "scope");
    const { lease, now } = await ctx.leases.get(scope);
    if (!lease)
      throw notFound(`no lease is held on ${scope}`, { scope, held: false, storeNow: iso(now) });
    return c.json({ held: true, ...leaseJson(lease, now) });
  });

  app.post("/api/leases/:scope/break", requireToken(ctx.token), async (c) => {
    const scope = validateScope(c.req.param("scope"), "scope");
    const b = await readBody(c, BreakBody);
    const r = await breakLease(ctx.leases, scope, {
      reason: b.reason,
      operator: b.operator,
      force: b.force,
      foreign: b.foreign,
      dryRun: b.dryRun,
    });
    switch (r.outcome) {
      case "free":
        throw notFound(`${scope} is free; nothing to break`, { outcome: "free" });
      case "refused":
        throw new HttpError(409, refusal(r.decision), { ...r });
      case "changed":
        throw new HttpError(
          409,
          `the lease changed while it was being broken (now token ${r.current?.token ?? "none"}); the incident is recorded, nothing was released`,
          { ...r },
        );
      case "would_break":
      case "broken":
        return c.json(r);
    }
  });

  return app;
}

function refusal(d: { action: string; reason?: string; summary: string }): string {
  if (d.reason === "death_unproven")
    return `not broken: death is unproven (force overrides UNKNOWN, never ALIVE): ${d.summary}`;
  if (d.reason === "foreign")
    return `not broken: another system's lease (foreign, after coordinating with it): ${d.summary}`;
  return `not broken: ${d.summary}`;
}
