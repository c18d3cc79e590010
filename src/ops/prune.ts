import { formatDuration } from "../domain/duration.js";
import { invalidInput } from "../domain/errors.js";
import { EventKind } from "../domain/event.js";
import { hostIdentity } from "../process/process-identity.js";
import type { PruneResult, Store } from "../store/store.js";

export interface PruneReport extends PruneResult {
  olderThanMs: number;
  message: string;
}

/**
 * `quiesce store prune --older-than 90d`: deletes finished runs (completed or failed, with
 * their effects), completed waves (with their hosts) and events older than that on the store's
 * clock, in one commit with a `store.pruned` event saying how much went. Runs and waves that
 * wait for a person, and every lease, are kept whatever their age.
 */
export async function pruneStore(
  store: Store,
  o: { olderThanMs: number; by: string },
): Promise<PruneReport> {
  if (!(o.olderThanMs > 0)) throw invalidInput("--older-than: must be longer than zero");
  const age = formatDuration(o.olderThanMs);
  const say = (r: PruneResult) =>
    `pruned ${r.runs} finished run(s) (${r.effects} effect(s)), ${r.waves} completed wave(s) and ${r.events} event(s) older than ${age} (before ${new Date(r.before).toISOString()})`;
  const r = await store.prune(o.olderThanMs, (r) => ({
    kind: EventKind.StorePruned,
    scope: null,
    token: null,
    runId: null,
    host: hostIdentity().host,
    pid: process.pid,
    message: `${say(r)} by ${o.by}`,
    detail: { ...r, olderThanMs: o.olderThanMs, by: o.by },
  }));
  return { ...r, olderThanMs: o.olderThanMs, message: say(r) };
}
