import type { Command } from "commander";
import type { Alerter } from "../alert/alerter.js";
import { buildAlerter } from "../config/build-alerter.js";
import { loadConfig, type ConfigFlags, type ResolvedConfig } from "../config/resolve-config.js";
import { EventKind } from "../domain/event.js";
import { Leases } from "../lease/leases.js";
import { hostIdentity } from "../process/process-identity.js";
import { openStore } from "../store/open-store.js";
import type { StoreCloseOptions } from "../store/store.js";

/** How long a command waits at exit for alerts still being delivered. */
const ALERT_FLUSH_MS = 5000;

/** Every command that touches the store takes --store and --config. */
export function withStore(cmd: Command): Command {
  return cmd
    .option(
      "--store <url>",
      "store: a file path, sqlite:PATH or postgres://... (env QUIESCE_STORE)",
    )
    .option(
      "--config <file>",
      "quiesce.yaml to read (env QUIESCE_CONFIG; default /etc/quiesce/quiesce.yaml for root)",
    );
}

/** Flags of commands that may take over a lease or raise alerts. */
export type TakeoverFlags = Pick<
  ConfigFlags,
  "probe" | "probeTimeout" | "remoteGrace" | "alertWebhook" | "alertCmd"
>;

export function withTakeoverFlags(cmd: Command): Command {
  return cmd
    .option(
      "--probe <command>",
      "probe command for takeover: exit 0 alive, 1 dead; {host} {pid} {child_pid} {run_id} {scope} are filled in (env QUIESCE_PROBE)",
    )
    .option("--probe-timeout <duration>", "how long the probe command may take (default 10s)")
    .option(
      "--remote-grace <duration>",
      "presume an owner no probe can reach dead after this much silence past expiry; 'never' disables (default 5m)",
    )
    .option(
      "--alert-webhook <url>",
      "POST alerts (takeovers, refusals, breaks) as JSON here (env QUIESCE_ALERT_WEBHOOK)",
    )
    .option(
      "--alert-cmd <command>",
      "run this with each alert as JSON on stdin (env QUIESCE_ALERT_CMD)",
    );
}

export interface Session {
  leases: Leases;
  config: ResolvedConfig;
  alerter: Alerter;
}

export interface SessionOptions {
  /** A command that only reads: the store must exist; nothing is created or written. */
  readOnly?: boolean;
}

/** Reads the configuration (flags > env > quiesce.yaml > defaults), then opens the store. */
export async function openSession(
  flags: ConfigFlags,
  options: SessionOptions = {},
): Promise<Session> {
  const config = loadConfig(flags); // every bad value fails here, before the store is touched
  const store = await openStore(config.store, process.env, { readOnly: options.readOnly });
  const host = hostIdentity().host;
  const alerter = buildAlerter(config, {
    // A failed delivery is itself recorded, so `quiesce events` shows what nobody was told.
    onFailure: (alert, sink, error) =>
      store.events
        .record({
          kind: EventKind.AlertFailed,
          scope: alert.scope,
          token: alert.token,
          runId: null,
          host,
          pid: process.pid,
          message: `alert ${alert.kind} not delivered to ${sink}: ${error.message}`,
          detail: { alert, sink, error: error.message },
        })
        .catch(() => undefined),
  });
  const leases = new Leases(store, { takeover: config.takeover, alerter });
  // Loss events an earlier process on this host could not write (its store was away) are
  // written first, so that `quiesce events` shows every loss.
  await leases.outbox.replaySpool().catch(() => 0);
  return { leases, config, alerter };
}

/** Waits (bounded) for alerts in flight, then releases what is held and closes the store. */
export async function closeSession(s: Session, store: StoreCloseOptions = {}): Promise<void> {
  await s.alerter.flush(ALERT_FLUSH_MS).catch(() => undefined);
  await s.leases.close(undefined, store).catch(() => undefined);
}

/** Opens, runs `fn`, always closes. */
export async function withLeases<T>(
  flags: ConfigFlags,
  fn: (leases: Leases, session: Session) => Promise<T>,
  options: SessionOptions = {},
): Promise<T> {
  const session = await openSession(flags, options);
  try {
    return await fn(session.leases, session);
  } finally {
    await closeSession(session);
  }
}

export function say(line: string): void {
  process.stderr.write(`quiesce: ${line}\n`);
}

/** For commands that only read (list, show, status, events, check): see SessionOptions. */
export const READ_ONLY: SessionOptions = { readOnly: true };
