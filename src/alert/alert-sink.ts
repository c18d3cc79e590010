import type { Alert } from "../domain/alert.js";

/**
 * One way of telling a human that something happened (a log line, a webhook, a command).
 * `send` resolves when the alert was delivered and rejects with an Error whose message is one
 * sentence saying why not. It must stop promptly when `signal` aborts: the Alerter aborts
 * whatever is still running when a process is about to exit.
 */
export interface AlertSink {
  /** Names the sink in reports and `alert.failed` events; never contains a secret. */
  readonly name: string;
  send(alert: Alert, signal: AbortSignal): Promise<void>;
}

/**
 * The exact bytes every sink delivers. One function, so a webhook receiver and an
 * `--alert-cmd` script parse the same document.
 */
export function serializeAlert(alert: Alert): string {
  return JSON.stringify(alert);
}

/**
 * Lets the caller's turn of the event loop finish first. Sinks whose start is costly call it
 * before doing anything: the first fetch() of a process loads undici synchronously (~40 ms),
 * and spawn() forks a process; neither may run inside emit(), in the middle of a takeover.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export function abortReason(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  return r instanceof Error ? r : new Error(typeof r === "string" ? r : "aborted");
}

export function errorMessage(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  // fetch() reports every network failure as "fetch failed"; the useful part is the cause
  // (ECONNREFUSED, ENOTFOUND, a TLS error, ...).
  const cause: unknown = e.cause;
  if (e.message === "fetch failed" && cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message;
  }
  return e.message;
}
