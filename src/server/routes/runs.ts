import { Hono } from "hono";
import { z } from "zod";
import { validateRunId, validateRuntimeId } from "../../domain/journal-names.js";
import { RUN_STATES, type RunState } from "../../domain/journal-record.js";
import { describeRun } from "../../journal/inspect.js";
import { resolveEffect } from "../../journal/resolve.js";
import { iso } from "../../lease/lease-json.js";
import { requireToken } from "../auth.js";
import { operatorField, readBody, reasonField } from "../body.js";
import type { ServerContext } from "../context.js";
import { badRequest, notFound } from "../http-errors.js";

const ResolveBody = z.strictObject({
  operator: operatorField,
  effect: z.string({ error: "effect: the effect's idempotency key" }).min(1, {
    error: "effect: the effect's idempotency key",
  }),
  as: z.enum(["observed", "not-sent"], { error: 'as: "observed" (it landed) or "not-sent"' }),
  reason: reasonField,
  result: z.unknown().optional(),
});

/** `runs list`, `runs show` and `runs resolve`, over HTTP, in the same shapes. */
export function runRoutes(ctx: ServerContext): Hono {
  const app = new Hono();

  app.get("/api/runs", async (c) => {
    const q = c.req.query();
    const state = q.state ? parseRunState(q.state) : undefined;
    if (q.runtime) validateRuntimeId(q.runtime, "runtime");
    const limit = q.limit === undefined ? 200 : Number(q.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
      throw badRequest(`limit: "${q.limit}" is not an integer from 1 to 10000`);
    const { runs, now } = await ctx.store.journal.listRuns({
      ...(state ? { state } : {}),
      ...(q.runtime ? { runtimeId: q.runtime } : {}),
      limit,
    });
    return c.json({
      storeNow: iso(now),
      runs: runs.map((r) => ({ ...r, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt) })),
    });
  });

  app.get("/api/runs/:id", async (c) => {
    const runId = validateRunId(c.req.param("id"), "run");
    const snap = await ctx.store.journal.getRun(runId);
    if (!snap) throw notFound(`no run ${runId} in the journal`);
    return c.json(describeRun(snap));
  });

  app.post("/api/runs/:id/resolve", requireToken(ctx.token), async (c) => {
    const runId = validateRunId(c.req.param("id"), "run");
    const b = await readBody(c, ResolveBody);
    if (b.result !== undefined && b.as !== "observed")
      throw badRequest('result: goes with "as": "observed" only');
    if (!(await ctx.store.journal.getRun(runId))) throw notFound(`no run ${runId} in the journal`);
    const r = await resolveEffect(ctx.store, {
      runId,
      key: b.effect,
      as: b.as,
      reason: b.reason,
      ...(b.result !== undefined ? { result: b.result } : {}),
      operator: b.operator,
    });
    return c.json({
      ...describeRun({ run: r.run, effects: [r.effect], now: r.run.updatedAt }),
      remaining: r.remaining,
    });
  });

  return app;
}

function parseRunState(s: string): RunState {
  const v = s.replace(/-/g, "_").toLowerCase();
  if (!(RUN_STATES as readonly string[]).includes(v))
    throw badRequest(`state: "${s}" is not a run state (${RUN_STATES.join(", ")})`);
  return v as RunState;
}
