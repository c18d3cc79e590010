import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { parseDuration } from "../../domain/duration.js";
import type { EventRecord } from "../../domain/event.js";
import { validateScope } from "../../domain/names.js";
import { iso } from "../../lease/lease-json.js";
import type { ServerContext } from "../context.js";
import { badRequest } from "../http-errors.js";

/** An event as `quiesce events --json` prints it. */
export const eventJson = (e: EventRecord) => ({ ...e, at: iso(e.at) });

const KEEPALIVE_MS = 15_000;

function intParam(value: string | undefined, what: string, min: number): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min)
    throw badRequest(`${what}: "${value}" is not an integer of at least ${min}`);
  return n;
}

/** `quiesce events`, and its `--follow` as server-sent events. */
export function eventRoutes(ctx: ServerContext): Hono {
  const app = new Hono();

  app.get("/api/events", async (c) => {
    const q = c.req.query();
    const scope = q.scope ? validateScope(q.scope, "scope") : undefined;
    const sinceMs = q.since ? parseDuration(q.since, "since") : undefined;
    const afterId = intParam(q.after, "after", 0);
    const limit = intParam(q.limit, "limit", 1) ?? 200;
    if (limit > 10_000) throw badRequest(`limit: at most 10000`);
    const since = sinceMs === undefined ? undefined : (await ctx.store.now()) - sinceMs;
    const events = await ctx.leases.events({ scope, since, afterId, limit });
    return c.json({ events: events.map(eventJson) });
  });

  /**
   * Every event as it is written. The hub reads the log once per tick for all streams; a client
   * that reconnects with `Last-Event-ID` (browsers do it themselves) first gets what it missed,
   * read once for it, then the live events, each exactly once and in order.
   */
  app.get("/api/events/stream", (c) => {
    const resume = intParam(
      c.req.header("last-event-id") ?? c.req.query("after"),
      "Last-Event-ID",
      0,
    );
    const scope = c.req.query("scope") ? validateScope(c.req.query("scope")!, "scope") : undefined;
    return streamSSE(c, async (stream) => {
      let cursor = resume ?? ctx.hub.lastId;
      let backlogDone = resume === undefined;
      const held: EventRecord[] = [];
      let chain = Promise.resolve();
      const send = (events: readonly EventRecord[]) => {
        chain = chain.then(async () => {
          for (const e of events) {
            if (cursor !== null && e.id <= cursor) continue;
            cursor = e.id;
            if (scope !== undefined && e.scope !== scope) continue;
            await stream.writeSSE({ id: String(e.id), data: JSON.stringify(eventJson(e)) });
          }
        });
      };
      const off = ctx.hub.onEvents((events) => (backlogDone ? send(events) : held.push(...events)));
      const done = new Promise<void>((resolve) => {
        stream.onAbort(resolve);
        ctx.shutdown.addEventListener("abort", () => resolve(), { once: true });
      });
      const keepalive = setInterval(() => void stream.write(": keep-alive\n\n"), KEEPALIVE_MS);
      try {
        await stream.write("retry: 2000\n\n");
        if (!backlogDone) {
          send(await ctx.leases.events({ afterId: resume, scope, limit: 10_000 }));
          backlogDone = true;
          send(held.splice(0));
        }
        await done;
      } finally {
        clearInterval(keepalive);
        off();
        await chain.catch(() => undefined);
      }
    });
  });

  return app;
}
