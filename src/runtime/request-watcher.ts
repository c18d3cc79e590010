import type { MaintenanceRequest, RuntimeRecord } from "../domain/runtime-record.js";
import type { Store } from "../store/store.js";

export interface RequestWatch {
  /** Acts on a pending request; the watch ends once it is called. */
  onRequest(request: MaintenanceRequest, record: RuntimeRecord): void | Promise<void>;
  /** True while requests may be acted on (e.g. RUNNING, not draining, lease held). */
  accepting(record: RuntimeRecord): boolean;
  /** Stops polling (draining already, or ended). */
  done(): boolean;
}

/**
 * The maintenance-window request watcher that the agent runtime and the wave agent share:
 * polls the runtime record for a request (`quiesce maintenance start`, `wave stop`) every
 * `pollMs` and hands it over once. Store errors are skipped: the lease keeper is what decides
 * whether this process may go on. Returns the stop function (idempotent).
 */
export function watchRequests(
  store: Store,
  runtimeId: string,
  pollMs: number,
  w: RequestWatch,
  firstDelayMs = 0,
): () => void {
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const schedule = (ms: number) => {
    timer = setTimeout(() => void tick(), ms);
    timer.unref();
  };
  const tick = async () => {
    timer = null;
    if (stopped || w.done()) return;
    try {
      const { runtime } = await store.journal.getRuntime(runtimeId);
      if (runtime?.request && w.accepting(runtime) && !w.done()) {
        await w.onRequest(runtime.request, runtime);
        return;
      }
    } catch {
      /* the store is unreachable right now; try again next tick */
    }
    if (!stopped) schedule(pollMs);
  };
  schedule(firstDelayMs);
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
