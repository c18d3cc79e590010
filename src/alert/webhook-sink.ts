import { formatDuration } from "../domain/duration.js";
import type { Alert } from "../domain/alert.js";
import {
  abortReason,
  type AlertSink,
  errorMessage,
  nextTurn,
  serializeAlert,
  sleep,
} from "./alert-sink.js";

export const WEBHOOK_DEFAULTS = {
  /** Per attempt: a receiver that has not answered in 5 s is not going to. */
  timeoutMs: 5000,
  /** In total, the first try included. */
  attempts: 3,
  /** Before the first retry; doubles each time, capped at BACKOFF_CAP_MS. */
  backoffMs: 500,
} as const;
const BACKOFF_CAP_MS = 10_000;

export interface WebhookSinkOptions {
  /** http:// or https:// (checked by the config layer; here it must merely parse). */
  url: string;
  timeoutMs?: number;
  attempts?: number;
  backoffMs?: number;
  /** Tests and embedders may pass their own; the default is Node's global fetch. */
  fetch?: typeof fetch;
}

/**
 * POSTs the alert as JSON. 2xx is delivered; any other status, a network error or a timeout is
 * retried with exponential backoff until `attempts` run out, then `send` rejects with one
 * sentence naming the last problem. The caller's signal (the Alerter giving up) stops both an
 * attempt in flight and a backoff wait.
 */
export function createWebhookSink(options: WebhookSinkOptions): AlertSink {
  const url = new URL(options.url);
  const timeoutMs = options.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs;
  const attempts = Math.max(1, Math.floor(options.attempts ?? WEBHOOK_DEFAULTS.attempts));
  const backoffMs = options.backoffMs ?? WEBHOOK_DEFAULTS.backoffMs;
  const doFetch = options.fetch ?? fetch;
  // Chat webhooks (Slack, Teams, Discord) carry their secret in the path or query, and the
  // name ends up in logs and events: name the origin only.
  const name = `webhook ${url.origin}`;

  async function attempt(body: string, signal: AbortSignal): Promise<string | null> {
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const res = await doFetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        // Not followed: a 301/302 would turn the POST into a GET, and any redirect could send
        // the alert to another origin. A 3xx is reported like any other non-2xx status.
        redirect: "manual",
        signal: AbortSignal.any([signal, timeout]),
      });
      // Release the connection; the receiver's answer is of no use to us.
      await res.body?.cancel().catch(() => undefined);
      return res.ok ? null : `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}`;
    } catch (e) {
      if (signal.aborted) throw abortReason(signal);
      if (timeout.aborted) return `no answer within ${formatDuration(timeoutMs)}`;
      return errorMessage(e);
    }
  }

  return {
    name,
    async send(alert: Alert, signal: AbortSignal): Promise<void> {
      const body = serializeAlert(alert);
      await nextTurn();
      let problem = "";
      for (let n = 1; n <= attempts; n++) {
        if (n > 1) await sleep(Math.min(backoffMs * 2 ** (n - 2), BACKOFF_CAP_MS), signal);
        const failed = await attempt(body, signal);
        if (failed === null) return;
        problem = failed;
      }
      const tries = attempts === 1 ? "1 attempt" : `${attempts} attempts`;
      throw new Error(`${name}: not delivered after ${tries}; last: ${problem}`);
    },
  };
}
