import type { Alert } from "../domain/alert.js";
import { formatDuration } from "../domain/duration.js";
import { type AlertSink, errorMessage } from "./alert-sink.js";
import { monoMs } from "../process/clock.js";

export type AlertDeliveryStatus = "delivered" | "failed" | "abandoned";

/** What became of one alert at one sink. */
export interface AlertDeliveryReport {
  sink: string;
  alert: Alert;
  /** `abandoned`: still in flight when flush() reached its bound; it was aborted. */
  status: AlertDeliveryStatus;
  /** Why it was not delivered; absent when delivered. */
  error?: string;
  /** From emit() to the outcome. */
  elapsedMs: number;
}

/**
 * Called once per delivery that did not succeed (after the sink's own retries), with the
 * sink's name. A returned promise is awaited by flush() within its bound. It must not emit().
 */
export type AlertFailureHandler = (
  alert: Alert,
  sink: string,
  error: Error,
) => void | Promise<void>;

export interface AlerterOptions {
  onFailure?: AlertFailureHandler;
}

interface Delivery {
  sink: AlertSink;
  alert: Alert;
  startedAt: number;
  controller: AbortController;
  settled: boolean;
  done: Promise<void>;
}

/** A long-running holder may alert for days without flushing; keep the newest reports only. */
const MAX_REPORTS = 1000;

/**
 * Fans each alert out to every sink. `emit()` starts the deliveries and returns at once: it
 * never awaits a network or a child process and never throws, because it is called in the
 * middle of lease operations (a takeover) that a dead webhook must not delay. Failures end up
 * in reports and in `onFailure`, never as an exception or an unhandled rejection.
 */
export class Alerter {
  readonly #sinks: readonly AlertSink[];
  readonly #onFailure: AlertFailureHandler | undefined;
  readonly #inflight = new Set<Delivery>();
  readonly #followUps = new Set<Promise<void>>();
  #reports: AlertDeliveryReport[] = [];

  constructor(sinks: readonly AlertSink[], options: AlerterOptions = {}) {
    this.#sinks = [...sinks];
    this.#onFailure = options.onFailure;
  }

  /** Names of the configured sinks, in delivery order. */
  get sinkNames(): readonly string[] {
    return this.#sinks.map((s) => s.name);
  }

  /** Deliveries still in flight. */
  get pending(): number {
    return this.#inflight.size;
  }

  emit(alert: Alert): void {
    for (const sink of this.#sinks) {
      try {
        this.#start(sink, alert);
      } catch {
        // #start guards the sink call itself; this only shields the caller from a bug here.
      }
    }
  }

  /**
   * Waits for deliveries in flight (and onFailure follow-ups) for at most `timeoutMs`, then
   * aborts whatever is left (killing commands, closing requests so the process can exit),
   * reports it as abandoned and calls onFailure for it without waiting. Returns the reports
   * of every delivery finished since the previous flush. For a process about to exit.
   */
  async flush(timeoutMs: number): Promise<AlertDeliveryReport[]> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<"expired">((r) => (timer = setTimeout(r, timeoutMs, "expired")));
    try {
      // Loop: an onFailure follow-up may only start once its delivery settles.
      while (this.#inflight.size + this.#followUps.size > 0) {
        const all = Promise.all([...[...this.#inflight].map((d) => d.done), ...this.#followUps]);
        if ((await Promise.race([all.then(() => "settled" as const), expired])) === "expired") {
          break;
        }
      }
    } finally {
      clearTimeout(timer);
    }
    for (const d of [...this.#inflight]) {
      const why = new Error(
        `${d.sink.name}: abandoned, still undelivered when the process stopped waiting (${formatDuration(timeoutMs)})`,
      );
      this.#settle(d, "abandoned", why);
      d.controller.abort(why);
    }
    const reports = this.#reports;
    this.#reports = [];
    return reports;
  }

  #start(sink: AlertSink, alert: Alert): void {
    const controller = new AbortController();
    let sent: Promise<void>;
    try {
      sent = sink.send(alert, controller.signal);
    } catch (e) {
      sent = Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    const d: Delivery = {
      sink,
      alert,
      startedAt: monoMs(),
      controller,
      settled: false,
      done: Promise.resolve(),
    };
    this.#inflight.add(d);
    d.done = sent.then(
      () => this.#settle(d, "delivered"),
      (e: unknown) => this.#settle(d, "failed", e instanceof Error ? e : new Error(String(e))),
    );
  }

  /** First outcome wins: a delivery abandoned by flush() that fails later is not reported twice. */
  #settle(d: Delivery, status: AlertDeliveryStatus, error?: Error): void {
    if (d.settled) return;
    d.settled = true;
    this.#inflight.delete(d);
    const report: AlertDeliveryReport = {
      sink: d.sink.name,
      alert: d.alert,
      status,
      elapsedMs: Math.round(monoMs() - d.startedAt),
    };
    if (error) report.error = errorMessage(error);
    this.#reports.push(report);
    if (this.#reports.length > MAX_REPORTS) this.#reports.shift();
    if (error) this.#notify(d.alert, d.sink.name, error);
  }

  #notify(alert: Alert, sink: string, error: Error): void {
    const handler = this.#onFailure;
    if (!handler) return;
    let result: void | Promise<void>;
    try {
      result = handler(alert, sink, error);
    } catch {
      return; // a failing failure handler has nobody left to tell
    }
    const tracked: Promise<void> = Promise.resolve(result)
      .catch(() => undefined)
      .finally(() => this.#followUps.delete(tracked));
    this.#followUps.add(tracked);
  }
}
