import { formatDuration } from "../domain/duration.js";
import { EventKind, type EventInput } from "../domain/event.js";
import type { RuntimeRecord } from "../domain/runtime-record.js";
import type { JournalWrite, MaintenanceRequestInput } from "./journal-store.js";

/** Events the journal backends write in the same commit as the change they describe. */

/** The event a refused journal write leaves: a zombie tried to write (I3). */
export function fencedEvent(w: JournalWrite, scope: string, reason: string): EventInput {
  const runId = w.kind === "create_run" ? w.run.runId : w.runId;
  const what = w.kind === "effect" ? `effect ${w.effect.key} -> ${w.effect.state}` : w.kind;
  return {
    kind: EventKind.FencedWriteRejected,
    scope,
    token: w.token,
    runId,
    host: null,
    pid: null,
    message: `journal write (${what}) of run ${runId} with token ${w.token} refused: ${reason.replace("_", " ")}`,
    detail: { reason, write: w.kind },
  };
}

export function maintenanceEvent(rt: RuntimeRecord, req: MaintenanceRequestInput): EventInput {
  return {
    kind: EventKind.MaintenanceRequested,
    scope: rt.scope,
    token: null,
    runId: null,
    host: null,
    pid: null,
    message: `maintenance ${req.maintenanceId} requested by ${req.by}: drain ${rt.runtimeId}${req.drainTimeoutMs === null ? "" : ` within ${formatDuration(req.drainTimeoutMs)}`}`,
    detail: {
      runtimeId: rt.runtimeId,
      maintenanceId: req.maintenanceId,
      drainTimeoutMs: req.drainTimeoutMs,
      by: req.by,
    },
  };
}
