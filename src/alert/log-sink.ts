import type { Alert } from "../domain/alert.js";
import type { AlertSink } from "./alert-sink.js";

/** `quiesce: ALERT [critical] lease.taken_over host:db-7: the previous owner ...` */
export function formatAlertLine(alert: Alert): string {
  const scope = alert.scope === null ? "" : ` ${alert.scope}`;
  // One alert, one line: a summary with a newline would split it in a log collector.
  const summary = alert.summary.replace(/\s*[\r\n]+\s*/g, " ");
  return `quiesce: ALERT [${alert.severity}] ${alert.kind}${scope}: ${summary}`;
}

/**
 * The sink that is always on: whatever else is configured or fails, the alert is in the
 * process's stderr (and so in the journal of whatever runs it). The write is synchronous, in
 * the `emit()` call itself, so it lands even when the process exits right after.
 */
export function createLogSink(
  write: (line: string) => void = (line) => void process.stderr.write(line),
): AlertSink {
  return {
    name: "log",
    send(alert) {
      try {
        write(`${formatAlertLine(alert)}\n`);
        return Promise.resolve();
      } catch (e) {
        return Promise.reject(e instanceof Error ? e : new Error(String(e)));
      }
    },
  };
}
