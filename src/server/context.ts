import type { Leases } from "../lease/leases.js";
import type { Store } from "../store/store.js";
import type { DashboardFeed } from "./dashboard/feed.js";
import type { EventHub } from "./event-hub.js";
import type { LeaseMirror } from "./lease-mirror.js";
import type { ServerMetrics } from "./metrics.js";

/** What every route needs; one per server. */
export interface ServerContext {
  store: Store;
  leases: Leases;
  /** The operators' token; null: the server is read-only. */
  token: string | null;
  maxHoldMs: number | null;
  hub: EventHub;
  feed: DashboardFeed;
  metrics: ServerMetrics;
  /** The held leases, read for every request but only what changed re-read (see LeaseMirror). */
  mirror: LeaseMirror;
  /** Aborted at shutdown: open streams end. */
  shutdown: AbortSignal;
}
