import { RuntimeState } from "../domain/runtime-state.js";
import { onStopSignals } from "../process/stop-signals.js";
import { watchRequests } from "./request-watcher.js";
import type { Runtime } from "./runtime.js";

/**
 * Drains when a maintenance request (`quiesce maintenance start` from another process) appears
 * on the runtime's record: polled every `pollMs` (250 ms by default), so the runtime notices
 * within a second.
 */
export function watchMaintenanceRequests(rt: Runtime, pollMs: number): void {
  const stop = watchRequests(rt.store, rt.id, pollMs, {
    accepting: (record) => record.state === RuntimeState.RUNNING && !rt.draining,
    done: () => rt.draining,
    onRequest: (req) => {
      void rt.drain({
        maintenanceId: req.maintenanceId,
        ...(req.drainTimeoutMs !== null ? { drainTimeoutMs: req.drainTimeoutMs } : {}),
        reason: `maintenance requested by ${req.by}`,
      });
    },
  });
  rt.onEnd(stop);
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
