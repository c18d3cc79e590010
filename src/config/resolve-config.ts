import { COMMAND_DEFAULTS } from "../alert/command-sink.js";
import { WEBHOOK_DEFAULTS } from "../alert/webhook-sink.js";
import { invalidInput } from "../domain/errors.js";
import { DEFAULT_PROBE_TIMEOUT_MS, DEFAULT_REMOTE_GRACE_MS } from "../lease/leases.js";
import {
  checkDuration,
  checkGrace,
  checkHttpUrl,
  checkStore,
  checkSystem,
  checkText,
  FieldProblem,
} from "./field-checks.js";
import {
  configLocation,
  type LoadedConfig,
  loadConfigFile,
  type ReadText,
} from "./config-location.js";

/** The command-line flags that carry configuration (commander's camelCase names). */
export interface ConfigFlags {
  config?: string;
  store?: string;
  system?: string;
  alertWebhook?: string;
  alertCmd?: string;
  probe?: string;
  probeTimeout?: string;
  remoteGrace?: string;
  maxHold?: string;
}

export type ConfigSource = "flag" | "env" | "file" | "default";

/** Every setting after flag > env > file > default; what the rest of quiesce is given. */
export interface ResolvedConfig {
  /** The config file that was read, or null when there was none. */
  configFile: string | null;
  /** For openStore(): undefined means the default store file. */
  store: string | undefined;
  system: string;
  alerts: {
    webhook: { url: string; timeoutMs: number; attempts: number } | null;
    command: { command: string; timeoutMs: number } | null;
  };
  /** Shaped as lease/leases.ts TakeoverConfig, so it can be passed as is. */
  takeover: { probe: string | null; probeTimeoutMs: number; remoteGraceMs: number | null };
  check: { maxHoldMs: number | null };
  /** `audit:` of quiesce.yaml (no flag or variable sets these). */
  audit: { paths: string[]; accept: { path: string; reason: string }[] };
  /** Where each setting came from (`quiesce config`-style output, debugging). */
  sources: Record<SettingName, ConfigSource>;
}

export type SettingName =
  | "store"
  | "system"
  | "alertWebhook"
  | "alertCommand"
  | "probe"
  | "probeTimeout"
  | "remoteGrace"
  | "maxHold";

export const CONFIG_DEFAULTS = {
  system: "quiesce",
  probeTimeoutMs: DEFAULT_PROBE_TIMEOUT_MS,
  remoteGraceMs: DEFAULT_REMOTE_GRACE_MS,
  webhookTimeoutMs: WEBHOOK_DEFAULTS.timeoutMs,
  /** quiesce.yaml's `retries` counts attempts after the first. */
  webhookRetries: WEBHOOK_DEFAULTS.attempts - 1,
  commandTimeoutMs: COMMAND_DEFAULTS.timeoutMs,
} as const;

/** A flag or variable value, checked like the file's, its problem named after its source. */
function checked<T>(subject: string, value: string, check: (v: unknown) => T): T {
  try {
    return check(value);
  } catch (e) {
    if (e instanceof FieldProblem) throw invalidInput(`${subject}: ${e.message}`);
    throw e;
  }
}

/**
 * Merges one setting. An empty environment variable counts as unset (as QUIESCE_STORE always
 * has); an empty flag is a mistake and is reported by its check.
 */
function pick<T>(
  flag: { name: string; value: string | undefined },
  envName: string,
  env: NodeJS.ProcessEnv,
  fromFile: T | undefined,
  check: (v: unknown) => T,
): { value: T; source: ConfigSource } | undefined {
  if (flag.value !== undefined)
    return { value: checked(flag.name, flag.value, check), source: "flag" };
  const fromEnv = env[envName];
  if (fromEnv) return { value: checked(envName, fromEnv, check), source: "env" };
  if (fromFile !== undefined) return { value: fromFile, source: "file" };
  return undefined;
}

/**
 * Pure: merges flags, environment and an already loaded file (or null) with the defaults.
 * Flags and variables are checked here with the same rules as the file, so a bad value fails
 * before any store is opened.
 */
export function resolveConfig(
  flags: ConfigFlags,
  loaded: LoadedConfig | null,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedConfig {
  const file = loaded?.file ?? {};
  const positive = (v: unknown) => checkDuration(v, { allowZero: false });
  const store = pick(
    { name: "--store", value: flags.store },
    "QUIESCE_STORE",
    env,
    file.store,
    checkStore,
  );
  const system = pick(
    { name: "--system", value: flags.system },
    "QUIESCE_SYSTEM",
    env,
    file.system,
    checkSystem,
  );
  const fileHook = file.alerts?.webhook;
  const webhook = pick(
    { name: "--alert-webhook", value: flags.alertWebhook },
    "QUIESCE_ALERT_WEBHOOK",
    env,
    fileHook?.url,
    checkHttpUrl,
  );
  const command = pick(
    { name: "--alert-cmd", value: flags.alertCmd },
    "QUIESCE_ALERT_CMD",
    env,
    file.alerts?.command,
    checkText,
  );
  const probe = pick(
    { name: "--probe", value: flags.probe },
    "QUIESCE_PROBE",
    env,
    file.takeover?.probe,
    checkText,
  );
  const probeTimeout = pick(
    { name: "--probe-timeout", value: flags.probeTimeout },
    "QUIESCE_PROBE_TIMEOUT",
    env,
    file.takeover?.probeTimeoutMs,
    positive,
  );
  const remoteGrace = pick(
    { name: "--remote-grace", value: flags.remoteGrace },
    "QUIESCE_REMOTE_GRACE",
    env,
    file.takeover?.remoteGraceMs,
    checkGrace,
  );
  const maxHold = pick(
    { name: "--max-hold", value: flags.maxHold },
    "QUIESCE_MAX_HOLD",
    env,
    file.check?.maxHoldMs,
    positive,
  );
  const source = (s: { source: ConfigSource } | undefined): ConfigSource => s?.source ?? "default";
  return {
    configFile: loaded?.path ?? null,
    store: store?.value,
    system: system?.value ?? CONFIG_DEFAULTS.system,
    alerts: {
      // The file's timeout and retries apply to a URL given by flag too: they describe how
      // patient to be with webhooks here, whichever endpoint it is.
      webhook: webhook
        ? {
            url: webhook.value,
            timeoutMs: fileHook?.timeoutMs ?? CONFIG_DEFAULTS.webhookTimeoutMs,
            attempts: 1 + (fileHook?.retries ?? CONFIG_DEFAULTS.webhookRetries),
          }
        : null,
      command: command
        ? { command: command.value, timeoutMs: CONFIG_DEFAULTS.commandTimeoutMs }
        : null,
    },
    takeover: {
      probe: probe?.value ?? null,
      probeTimeoutMs: probeTimeout?.value ?? CONFIG_DEFAULTS.probeTimeoutMs,
      remoteGraceMs: remoteGrace === undefined ? CONFIG_DEFAULTS.remoteGraceMs : remoteGrace.value,
    },
    check: { maxHoldMs: maxHold?.value ?? null },
    audit: { paths: file.audit?.paths ?? [], accept: file.audit?.accept ?? [] },
    sources: {
      store: source(store),
      system: source(system),
      alertWebhook: source(webhook),
      alertCommand: source(command),
      probe: source(probe),
      probeTimeout: source(probeTimeout),
      remoteGrace: source(remoteGrace),
      maxHold: source(maxHold),
    },
  };
}

/**
 * What a command calls: finds the config file (--config, QUIESCE_CONFIG or the default
 * location), reads and validates it, and merges. Every problem is an INVALID_INPUT error.
 */
export function loadConfig(
  flags: ConfigFlags,
  env: NodeJS.ProcessEnv = process.env,
  uid = process.getuid?.() ?? -1,
  read?: ReadText,
): ResolvedConfig {
  const loaded = loadConfigFile(configLocation(flags.config, env, uid), read);
  return resolveConfig(flags, loaded, env);
}
