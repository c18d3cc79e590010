/**
 * quiesce: crash-safe maintenance for long-running work. The public library API.
 *
 *     import { openLeases } from "quiesce";
 *     await using leases = await openLeases();            // QUIESCE_STORE or the default file
 *     await using lease = await leases.acquire("patch:wave", { ttl: "30s" });
 *     await doWork(lease.signal, lease.token);            // signal aborts if the lease is lost
 */
import { Leases } from "./lease/leases.js";
import type { KeeperEvents } from "./lease/heartbeat-keeper.js";
import { openStore } from "./store/open-store.js";

export { ErrorCode, QuiesceError, isQuiesceError } from "./domain/errors.js";
export { parseDuration, formatDuration } from "./domain/duration.js";
export type { LeaseOwner, LeaseRecord, LeaseTiming } from "./domain/lease.js";
export { EventKind, type EventRecord } from "./domain/event.js";
export type {
  Store,
  StoreInfo,
  AcquireOutcome,
  FenceOutcome,
  ReleaseOutcome,
} from "./store/store.js";
export { openStore, resolveStore, defaultSqlitePath } from "./store/open-store.js";
export { SqliteStore } from "./store/sqlite/sqlite-store.js";
export { PgStore } from "./store/postgres/pg-store.js";
export { Leases, type TryAcquireResult, type Refusal } from "./lease/leases.js";
export { Lease } from "./lease/lease.js";
export type { AcquireOptions, WaitProgress } from "./lease/acquire-options.js";
export {
  superviseCommand,
  type SuperviseOptions,
  type SuperviseResult,
} from "./lease/supervise-command.js";

/** Opens the store (`store` URL/path, else QUIESCE_STORE, else the default file) and returns
 * a Leases instance that releases what it holds when closed or disposed. */
export async function openLeases(options: { store?: string } & KeeperEvents = {}): Promise<Leases> {
  return new Leases(await openStore(options.store), options);
}
