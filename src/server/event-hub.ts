import type { EventRecord } from "../domain/event.js";
import type { Store } from "../store/store.js";
import { scrubSecrets } from "./http-errors.js";

export type Health = { ok: true } | { ok: false; error: string };

export interface Tick {
  /** New events read in this tick (0 when the store was down). */
  newEvents: number;
  health: Health;
  /** The health changed in this tick (down -> up or up -> down). */
  healthChanged: boolean;
}

/** One read per tick, however many clients listen (issue 10, "Efficiency"). */
const MAX_PER_TICK = 10_000;

/**
 * The server's one reader of the event log. Every tick it reads the events written since the
 * last one, in ONE query, and hands the batch to every listener (the SSE streams, the dashboard
 * feed). A failed read marks the store down; the next good read marks it up again, so the
 * server recovers by itself when the store comes back.
 */
export class EventHub {
  /** The newest event id seen; null until the store has answered once. */
  lastId: number | null = null;
  health: Health = { ok: true };
  private readonly eventListeners = new Set<(events: readonly EventRecord[]) => void>();
  private readonly tickListeners = new Set<(tick: Tick) => void>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly tickMs = 500,
  ) {}

  async start(): Promise<void> {
    await this.tick(false);
  }

  onEvents(fn: (events: readonly EventRecord[]) => void): () => void {
    this.eventListeners.add(fn);
    return () => this.eventListeners.delete(fn);
  }

  onTick(fn: (tick: Tick) => void): () => void {
    this.tickListeners.add(fn);
    return () => this.tickListeners.delete(fn);
  }

  /** Idempotent. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async tick(notify = true): Promise<void> {
    let events: EventRecord[] = [];
    const wasOk = this.health.ok;
    try {
      if (this.lastId === null) {
        // First contact (or after starting with the store down): begin at the tail, do not
        // replay the whole history to the streams.
        const [newest] = await this.store.events.list({ limit: 1 });
        this.lastId = newest?.id ?? 0;
      } else {
        events = await this.store.events.list({ afterId: this.lastId, limit: MAX_PER_TICK });
        if (events.length > 0) this.lastId = events[events.length - 1]!.id;
      }
      this.health = { ok: true };
    } catch (e) {
      this.health = { ok: false, error: scrubSecrets((e as Error).message) };
    }
    if (this.stopped) return;
    if (notify) {
      if (events.length > 0) for (const fn of this.eventListeners) fn(events);
      const tick = {
        newEvents: events.length,
        health: this.health,
        healthChanged: wasOk !== this.health.ok,
      };
      for (const fn of this.tickListeners) fn(tick);
    }
    this.timer = setTimeout(() => void this.tick(), this.tickMs);
    this.timer.unref();
  }
}
