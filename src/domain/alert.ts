/**
 * What an alert sink receives: one JSON object per alert. Stable field names: webhooks and
 * `--alert-cmd` scripts parse them.
 */
export type AlertSeverity = "info" | "warning" | "critical";

export interface Alert {
  /** The event kind that raised it (`lease.taken_over`, `lease.takeover_refused`, ...). */
  kind: string;
  severity: AlertSeverity;
  scope: string | null;
  token: number | null;
  /** One sentence for a pager or a chat line. */
  summary: string;
  /** When it happened, ISO 8601 (store clock when known). */
  at: string;
  /** The host that raised the alert. */
  reporter: string;
  /** Structured facts: previous owner, probe evidence, operator, reason, ... */
  detail: Record<string, unknown>;
}
