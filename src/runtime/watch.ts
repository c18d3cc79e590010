import { RuntimeState } from "../domain/runtime-state.js";
import { onStopSignals } from "../process/stop-signals.js";
import type { Runtime } from "./runtime.js";

/**
 * Polls the runtime record for a maintenance request (`quiesce maintenance start` from another
 * process) and drains when one appears. A poll every `pollMs` (250 ms by default) means the
 * runtime notices within a second. Store errors are skipped: the lease keeper is what decides
 * whether this process may go on.
 */
export function watchMaintenanceRequests(rt: Runtime, pollMs: number): void {
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const tick = async () => {
    timer = null;
    if (stopped || rt.draining) return;
    try {
      const { runtime } = await rt.store.journal.getRuntime(rt.id);
      const req = runtime?.request;
      if (req && runtime?.state === RuntimeState.RUNNING && !rt.draining) {
        void rt.drain({
          maintenanceId: req.maintenanceId,
          ...(req.drainTimeoutMs !== null ? { drainTimeoutMs: req.drainTimeoutMs } : {}),
          reason: `maintenance requested by ${req.by}`,
        });
        return;
      }
    } catch {
      /* the store is unreachable right now; try again next tick */
    }
    if (!stopped) {
      timer = setTimeout(() => void tick(), pollMs);
      timer.unref();
    }
  };
  timer = setTimeout(() => void tick(), 0);
  timer.unref();
  rt.onEnd(() => {
    stopped = true;
    if (timer) clearTimeout(timer);
  });
}

/**
 * SIGTERM (or SIGINT, SIGHUP) starts the same drain as a maintenance request; a second signal
 * forces the deadline now (the policy decides what the runs in flight become) and arms a
 * short, unref'd watchdog that ends the process if even that hangs (src/process/stop-signals).
 */
export function handleSignals(rt: Runtime, watchdogMs = 10_000): void {
  const dispose = onStopSignals({
    graceful: (sig) => {
      rt.say(`${sig}: draining (again to stop now)`);
      void rt.drain({
        maintenanceId: `${sig.toLowerCase()}-${Date.now()}`,
        reason: `${sig} received`,
      });
    },
    forceful: (sig) => {
      rt.say(`${sig} again: the drain deadline is now`);
      rt.forceDeadline?.();
    },
    watchdog: { ms: watchdogMs, exitCode: () => 1 },
  });
  rt.onEnd(dispose);
}
