import { toMs } from "../domain/duration.js";
import { invalidInput } from "../domain/errors.js";
import { drainTimeout } from "../domain/maintenance-policy.js";
import { validateSystem } from "../domain/names.js";
import { parseFailureBudget, validateWaveName } from "../domain/wave-input.js";
import type { WaveRecord } from "../store/wave-store.js";
import { checkTemplate, runShell, type CommandRunner } from "./shell-command.js";

/** How to run a wave (`quiesce wave run NAME --patch CMD ...`). */
export interface WaveRunOptions {
  wave: string;
  /** The patch command; `{host}` (and `{wave}`, `{group}`) are filled in, shell-quoted. */
  patch?: string;
  /** Says whether a host is patched: exit 0 yes, 1 no, anything else unknown. */
  check?: string | null;
  /**
   * Run the patch, check and health commands on the host through this (`ssh {host}`), each
   * under a remote guard that ends it there by the host lease's deadline (remote-command.ts).
   */
  via?: string | null;
  /** Must pass (exit 0) before a host counts as succeeded and before the next batch. */
  health?: string | null;
  /** Keep retrying the health command this long (default 0: one attempt). */
  healthTimeout?: string | number;
  /** Between health attempts (default 5s). */
  healthInterval?: string | number;
  /** Hosts worked on at once within a batch (default: the batch size). */
  concurrency?: number;
  /** The patch may run again on a host where whether it ran is unknown. */
  idempotent?: boolean;
  /** The wave lease's TTL (default 30s) and heartbeat (default TTL/3); host leases too. */
  ttl?: string | number;
  heartbeat?: string | number;
  /** Wait this long for the wave's lease (default 0: exit 75 at once if held). */
  wait?: string | number;
  /** Wait this long for a busy host's lease before skipping it (default 0). */
  hostWait?: string | number;
  /** Wait this long for a host an earlier agent left mid-patch (its patch may still run;
   * default 10m). */
  leftoverWait?: string | number;
  /** Also skip a host while these systems hold a lease concerning it. */
  respect?: readonly string[];
  /** Override the wave's failure budget for this run (`3`, `5%`). */
  maxFailures?: string | number;
  /** How long a stop lets the hosts in flight finish before stopping them (default 1h). */
  drainTimeout?: string | number;
  /** After a forced stop: SIGTERM, then SIGKILL after this long (default 10s). */
  grace?: string | number;
  /** One log file per host here; null: commands' output is discarded. */
  logDir?: string | null;
  /** Drain on SIGTERM/SIGINT/SIGHUP (a second signal stops the hosts in flight). */
  signals?: boolean;
  /** How often to look for `wave stop` (default 250 ms). */
  pollMs?: number;
  /** Runs the commands (default: /bin/sh -c); benchmarks swap it to leave the spawn out. */
  runner?: CommandRunner;
  env?: NodeJS.ProcessEnv;
}

export interface ResolvedRun {
  wave: string;
  patch: string;
  check: string | null;
  health: string | null;
  via: string | null;
  healthTimeoutMs: number;
  healthIntervalMs: number;
  concurrency: number;
  idempotent: boolean;
  ttlMs: number;
  heartbeatMs: number | undefined;
  waitMs: number;
  hostWaitMs: number;
  leftoverWaitMs: number;
  respect: string[];
  maxFailures: number;
  drainTimeoutMs: number;
  graceMs: number;
  logDir: string | null;
  signals: boolean;
  pollMs: number;
  runner: CommandRunner;
  env: NodeJS.ProcessEnv;
}

/** What `wave resume` reuses from the previous agent's run unless told otherwise. */
export type StoredSettings = Partial<
  Pick<
    ResolvedRun,
    | "patch"
    | "check"
    | "health"
    | "via"
    | "healthTimeoutMs"
    | "healthIntervalMs"
    | "concurrency"
    | "idempotent"
  >
>;

export function storedSettings(r: ResolvedRun): StoredSettings {
  return {
    patch: r.patch,
    check: r.check,
    health: r.health,
    via: r.via,
    healthTimeoutMs: r.healthTimeoutMs,
    healthIntervalMs: r.healthIntervalMs,
    concurrency: r.concurrency,
    idempotent: r.idempotent,
  };
}

/** Validates everything (INVALID_INPUT, one sentence) before the lease is taken. */
export function resolveRunOptions(o: WaveRunOptions, wave: WaveRecord | null): ResolvedRun {
  validateWaveName(o.wave);
  const prev: StoredSettings = wave?.settings ? (JSON.parse(wave.settings) as StoredSettings) : {};
  const patch = o.patch ?? prev.patch;
  if (patch === undefined) throw invalidInput("wave run: --patch CMD is required");
  const ms = (v: string | number | undefined, what: string, dflt: number) =>
    v === undefined ? dflt : toMs(v, what);
  const concurrency = o.concurrency ?? prev.concurrency ?? wave?.batchSize ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw invalidInput(`--concurrency: ${concurrency} is not a positive whole number`);
  const check = o.check !== undefined ? o.check : (prev.check ?? null);
  const health = o.health !== undefined ? o.health : (prev.health ?? null);
  const via = o.via !== undefined ? o.via : (prev.via ?? null);
  return {
    wave: o.wave,
    patch: checkTemplate(patch, "--patch"),
    check: check === null ? null : checkTemplate(check, "--check"),
    health: health === null ? null : checkTemplate(health, "--health"),
    via: via === null ? null : checkTemplate(via, "--via"),
    healthTimeoutMs: ms(o.healthTimeout, "--health-timeout", prev.healthTimeoutMs ?? 0),
    healthIntervalMs: ms(o.healthInterval, "--health-interval", prev.healthIntervalMs ?? 5000),
    concurrency,
    idempotent: o.idempotent ?? prev.idempotent ?? false,
    ttlMs: ms(o.ttl, "--ttl", 30_000),
    heartbeatMs: o.heartbeat === undefined ? undefined : toMs(o.heartbeat, "--heartbeat"),
    waitMs: ms(o.wait, "--wait", 0),
    hostWaitMs: ms(o.hostWait, "--host-wait", 0),
    leftoverWaitMs: ms(o.leftoverWait, "--leftover-wait", 10 * 60_000),
    respect: (o.respect ?? []).map((s) => validateSystem(s, "--respect")),
    maxFailures:
      o.maxFailures === undefined
        ? (wave?.maxFailures ?? 0)
        : parseFailureBudget(String(o.maxFailures), wave?.hostCount ?? Number.MAX_SAFE_INTEGER).max,
    drainTimeoutMs:
      o.drainTimeout === undefined ? 3_600_000 : drainTimeout(o.drainTimeout, "--drain-timeout"),
    graceMs: ms(o.grace, "--grace", 10_000),
    logDir: o.logDir ?? null,
    signals: o.signals ?? false,
    pollMs: o.pollMs ?? 250,
    runner: o.runner ?? runShell,
    env: o.env ?? process.env,
  };
}
