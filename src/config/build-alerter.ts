import type { AlertSink } from "../alert/alert-sink.js";
import { type AlertFailureHandler, Alerter } from "../alert/alerter.js";
import { createCommandSink } from "../alert/command-sink.js";
import { createLogSink } from "../alert/log-sink.js";
import { createWebhookSink } from "../alert/webhook-sink.js";
import type { ResolvedConfig } from "./resolve-config.js";

export interface BuildAlerterOptions {
  /** Typically records an `alert.failed` event. */
  onFailure?: AlertFailureHandler;
  /** Where the log sink writes; stderr by default. */
  logWrite?: (line: string) => void;
  /** Environment for the alert command; the process's by default. */
  env?: NodeJS.ProcessEnv;
}

/** The sinks a resolved configuration asks for. The log sink is always first and always on. */
export function alertSinksFor(
  alerts: ResolvedConfig["alerts"],
  options: Pick<BuildAlerterOptions, "logWrite" | "env"> = {},
): AlertSink[] {
  const sinks: AlertSink[] = [createLogSink(options.logWrite)];
  if (alerts.webhook) {
    sinks.push(
      createWebhookSink({
        url: alerts.webhook.url,
        timeoutMs: alerts.webhook.timeoutMs,
        attempts: alerts.webhook.attempts,
      }),
    );
  }
  if (alerts.command) {
    sinks.push(
      createCommandSink({
        command: alerts.command.command,
        timeoutMs: alerts.command.timeoutMs,
        ...(options.env ? { env: options.env } : {}),
      }),
    );
  }
  return sinks;
}

export function buildAlerter(
  config: Pick<ResolvedConfig, "alerts">,
  options: BuildAlerterOptions = {},
): Alerter {
  return new Alerter(
    alertSinksFor(config.alerts, options),
    options.onFailure ? { onFailure: options.onFailure } : {},
  );
}
