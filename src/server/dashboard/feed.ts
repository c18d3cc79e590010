import type { Store } from "../../store/store.js";
import type { EventHub, Health } from "../event-hub.js";
import type { LeaseMirror } from "../lease-mirror.js";
import { scrubSecrets } from "../http-errors.js";
import { renderSections } from "./sections.js";
import { gatherSnapshot } from "./snapshot.js";

export interface FeedClient {
  send(event: "snapshot" | "health", data: string): void;
}

/**
 * The live dashboard's data: at most one snapshot read per tick for ALL connected pages,
 * rendered once and pushed to each. A snapshot is read when events were written, when the
 * store's health changed, or every `refreshMs` (heartbeats renew without events); never while
 * nobody watches.
 */
export class DashboardFeed {
  private readonly clients = new Set<FeedClient>();
  private last: { at: number; message: string } | null = null;
  private building: Promise<string | null> | null = null;
  private readonly off: () => void;

  constructor(
    private readonly store: Store,
    private readonly hub: EventHub,
    private readonly o: { maxHoldMs: number | null; refreshMs?: number; mirror: LeaseMirror },
  ) {
    this.off = hub.onTick((t) => {
      if (this.clients.size === 0) return;
      if (t.healthChanged) this.broadcast("health", healthJson(t.health));
      const stale = this.last === null || Date.now() - this.last.at >= (o.refreshMs ?? 5000);
      if (t.health.ok && (t.newEvents > 0 || t.healthChanged || stale))
        void this.build().then((m) => m !== null && this.broadcast("snapshot", m));
    });
  }

  get size(): number {
    return this.clients.size;
  }

  /** A new page: it gets the health and the latest snapshot at once, then every update. */
  add(client: FeedClient): () => void {
    this.clients.add(client);
    client.send("health", healthJson(this.hub.health));
    const fresh = this.last !== null && Date.now() - this.last.at < 1000;
    if (fresh) client.send("snapshot", this.last!.message);
    else
      void this.build().then(
        (m) => m !== null && this.clients.has(client) && client.send("snapshot", m),
      );
    return () => this.clients.delete(client);
  }

  close(): void {
    this.off();
    this.clients.clear();
  }

  private broadcast(event: "snapshot" | "health", data: string): void {
    for (const c of this.clients) c.send(event, data);
  }

  /** One read at a time: callers arriving during a read share its result. */
  private build(): Promise<string | null> {
    this.building ??= (async () => {
      try {
        const snap = await gatherSnapshot(this.store, {
          maxHoldMs: this.o.maxHoldMs,
          readLeases: () => this.o.mirror.listLeases(),
        });
        const message = JSON.stringify({ now: snap.now, sections: renderSections(snap) });
        this.last = { at: Date.now(), message };
        return message;
      } catch (e) {
        // The hub's next tick reports the outage; a failed snapshot read just waits for it.
        process.stderr.write(
          `quiesce serve: dashboard read failed: ${scrubSecrets((e as Error).message)}\n`,
        );
        return null;
      } finally {
        this.building = null;
      }
    })();
    return this.building;
  }
}

function healthJson(h: Health): string {
  return JSON.stringify(h);
}
