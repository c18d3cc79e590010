import { timeOrderedUuid } from "../process/random-uuid.js";
import { toMs } from "../domain/duration.js";
import { DEFAULT_TTL_MS, leaseTiming, type LeaseOwner, type LeaseTiming } from "../domain/lease.js";
import { validateNote, validateScope, validateSystem } from "../domain/names.js";
import { hostIdentity, processStartTime } from "../process/process-identity.js";

export interface AcquireOptions {
  /** How long the lease lives without a heartbeat. Default 30s. */
  ttl?: string | number;
  /** How often the keeper renews it. Default TTL/3. */
  heartbeat?: string | number;
  /** How long to wait (in a fair queue) if the scope is held. Default 0: fail at once. */
  wait?: string | number;
  /** The system holding the lease; `quiesce` unless another system's job holds it. */
  system?: string;
  note?: string;
  /** Defaults to a new random id; `quiesce run` passes it on as QUIESCE_RUN_ID. */
  runId?: string;
  /** The command line being protected, for humans reading `lock show`. */
  command?: string;
  /** The process that holds the lease; default this one. null for a lease held across
   * commands by a script (`lock acquire`). */
  pid?: number | null;
  /**
   * The command run under the lease, when it exists before the lease (`quiesce run` spawns
   * it behind a closed gate first): recorded by the acquisition itself, so that its pid is on
   * the lease from the first commit (write-ahead, I8) without a second one.
   */
  child?: { pid: number; start: string | null };
  /** Renew automatically until released (default true). */
  keepAlive?: boolean;
  /** Aborts a wait. */
  signal?: AbortSignal;
  /** Called while waiting, about once a second, for a progress display. */
  onWait?: (progress: WaitProgress) => void;
  /** Poll interval while waiting (ms). Default 50. */
  pollMs?: number;
  /** Override the self-fencing margin (ms); see leaseTiming(). */
  safetyMarginMs?: number;
  /** Take over an expired lease when its owner is shown dead (default: the Leases setting, on). */
  takeover?: boolean;
  /** Also wait while these other systems hold a lease on this host (`--respect backup,hypervisor`). */
  respect?: readonly string[];
}

export interface WaitProgress {
  scope: string;
  waitedMs: number;
  remainingMs: number;
  waitersAhead: number;
  message: string;
}

export interface ResolvedAcquire {
  respect: readonly string[];
  scope: string;
  timing: LeaseTiming;
  waitMs: number;
  owner: LeaseOwner;
  keepAlive: boolean;
  pollMs: number;
}

/** Validates everything up front, so bad input fails before the store is touched. */
export function resolveAcquire(scope: string, o: AcquireOptions): ResolvedAcquire {
  validateScope(scope, "scope");
  const ttlMs = o.ttl === undefined ? DEFAULT_TTL_MS : toMs(o.ttl, "--ttl");
  const heartbeatMs = o.heartbeat === undefined ? undefined : toMs(o.heartbeat, "--heartbeat");
  const timing = leaseTiming(ttlMs, heartbeatMs, o.safetyMarginMs);
  const waitMs = o.wait === undefined ? 0 : toMs(o.wait, "--wait");
  const pid = o.pid === undefined ? process.pid : o.pid;
  const id = hostIdentity();
  return {
    respect: (o.respect ?? []).map((s) => validateSystem(s, "--respect")),
    scope,
    timing,
    waitMs,
    keepAlive: o.keepAlive ?? true,
    pollMs: o.pollMs ?? 50,
    owner: {
      runId: o.runId ?? newRunId(),
      system: validateSystem(o.system ?? "quiesce"),
      host: id.host,
      pid,
      pidStart: pid === null ? null : processStartTime(pid),
      bootId: id.bootId,
      childPid: o.child?.pid ?? null,
      childPidStart: o.child?.start ?? null,
      command: o.command ?? null,
      note: o.note === undefined ? null : validateNote(o.note),
    },
  };
}

/** `r-` + a time-ordered UUID: unique across hosts without coordination (see timeOrderedUuid). */
export function newRunId(): string {
  return `r-${timeOrderedUuid()}`;
}
