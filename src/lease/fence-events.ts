import { EventKind } from "../domain/event.js";
import type { FenceFailure } from "../domain/fencing.js";
import type { LeaseRecord } from "../domain/lease.js";
import type { Store } from "../store/store.js";
import { hostIdentity } from "../process/process-identity.js";

export interface FenceRefusal {
  scope: string;
  token: number;
  /** What was refused: "state write (step)", "renewal", "command pid", ... */
  what: string;
  reason: FenceFailure;
  current: LeaseRecord | null;
  runId: string | null;
  pid: number | null;
}

/**
 * A write or renewal under a token that is no longer current (I3) leaves a
 * `lease.fenced_write_rejected` event, so `quiesce events` shows the zombie that tried. The
 * journal and the waves record theirs in the same commit as the refusal; the lease port's
 * refusals (putState, setChild, renew) are recorded here, once for every backend. Best effort:
 * the refusal itself stands whether or not the event can be written.
 */
export async function recordFenceRefusal(store: Store, r: FenceRefusal): Promise<void> {
  const current = r.current === null ? "no lease is held" : `token ${r.current.token} is current`;
  await store.events
    .record({
      kind: EventKind.FencedWriteRejected,
      scope: r.scope,
      token: r.token,
      runId: r.runId,
      host: hostIdentity().host,
      pid: r.pid,
      message: `${r.what} with token ${r.token} refused: ${r.reason.replace("_", " ")} (${current})`,
      detail: { reason: r.reason, write: r.what, currentToken: r.current?.token ?? null },
    })
    .catch(() => undefined);
}
