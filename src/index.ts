/**
 * quiesce: crash-safe maintenance for long-running work. The public library API.
 *
 *     import { openLeases } from "quiesce";
 *     await using leases = await openLeases();            // QUIESCE_STORE or the default file
 *     await using lease = await leases.acquire("patch:wave", { ttl: "30s" });
 *     await doWork(lease.signal, lease.token);            // signal aborts if the lease is lost
 */
import { Leases } from "./lease/leases.js";
import type { LeasesOptions } from "./lease/leases.js";
import { openStore } from "./store/open-store.js";

export { ErrorCode, QuiesceError, isQuiesceError } from "./domain/errors.js";
export { parseDuration, formatDuration } from "./domain/duration.js";
export type { LeaseOwner, LeaseRecord, LeaseTiming } from "./domain/lease.js";
export { EventKind, type EventRecord } from "./domain/event.js";
export type {
  Store,
  StoreInfo,
  AcquireOutcome,
  FenceOutcome,
  ReleaseOutcome,
} from "./store/store.js";
export { openStore, resolveStore, defaultSqlitePath } from "./store/open-store.js";
export { SqliteStore } from "./store/sqlite/sqlite-store.js";
export { PgStore } from "./store/postgres/pg-store.js";
export {
  Leases,
  type TryAcquireResult,
  type Refusal,
  type LeasesOptions,
  type TakeoverConfig,
} from "./lease/leases.js";
export { TakeoverProcedure, type TakeoverAttempt, type AlertEmitter } from "./lease/takeover.js";
export { reconcileExpired, type ReconcileEntry, type ReconcileOptions } from "./lease/reconcile.js";
export { breakLease, type BreakOptions, type BreakResult } from "./lease/break-lease.js";
export {
  runCheck,
  CheckStatus,
  DEFAULT_COLLECTORS,
  type CheckReport,
  type CheckFinding,
  type CheckCollector,
  type CheckContext,
  type CheckMetric,
  type CheckOptions,
} from "./ops/check.js";
export {
  runAudit,
  DEFAULT_AUDIT_ROOTS,
  type AuditOptions,
  type AuditReport,
  type AuditLock,
  type AuditIdiom,
  type AuditAccept,
} from "./ops/audit/audit.js";
export { LockKind, Verdict } from "./domain/legacy-lock.js";
export type { TakeoverDecision, TakeoverPolicy } from "./domain/takeover-policy.js";
export type { ProbeResult, ProbeVerdict } from "./domain/probe.js";
export type { Alert } from "./domain/alert.js";
export { Lease } from "./lease/lease.js";
export type { AcquireOptions, WaitProgress } from "./lease/acquire-options.js";
export {
  superviseCommand,
  type SuperviseOptions,
  type SuperviseResult,
} from "./lease/supervise-command.js";

/** Opens the store (`store` URL/path, else QUIESCE_STORE, else the default file) and returns
 * a Leases instance that releases what it holds when closed or disposed. */
export async function openLeases(
  options: { store?: string } & LeasesOptions = {},
): Promise<Leases> {
  return new Leases(await openStore(options.store), options);
}

// --- The side-effect journal and the maintenance-window runtime (README: "Journal and
// maintenance windows").
export { openRuntime } from "./runtime/open-runtime.js";
export { startRuntime, type RuntimeOptions, type StartupReport } from "./runtime/startup.js";
export { Runtime, type RuntimeOutcome, type StartRunResult } from "./runtime/runtime.js";
export type { DrainOptions } from "./runtime/drain.js";
export { loadPolicyFile } from "./runtime/policy-file.js";
export { startMaintenance, waitForMaintenance, runtimeStatus } from "./runtime/maintenance.js";
export { Journal, type JournalOptions } from "./journal/journal.js";
export { Run, type EffectSpec } from "./journal/run.js";
export type {
  Provider,
  ProviderCapabilities,
  DispatchRequest,
  Ack,
  LookupAnswer,
} from "./journal/provider.js";
export { resolveEffect, type ResolveInput, type ResolveResult } from "./journal/resolve.js";
export type { RunRecovery, EffectRecoveryNote } from "./journal/recover-run.js";
export { describeRun } from "./journal/inspect.js";
export { EffectState } from "./domain/effect-state.js";
export { RunState, type RunRecord, type EffectRecord } from "./domain/journal-record.js";
export { RuntimeState } from "./domain/runtime-state.js";
export type { RuntimeRecord } from "./domain/runtime-record.js";
export {
  parsePolicy,
  DEFAULT_POLICY,
  type MaintenancePolicy,
} from "./domain/maintenance-policy.js";
export type { JournalStore } from "./store/journal-store.js";
export { runDrill, type DrillOptions, type DrillReport, type DrillRow } from "./ops/drill/drill.js";

// --- Rolling patch waves (README: "Rolling patch waves").
export { createWave, prepareWave, type CreateWaveInput } from "./wave/create-wave.js";
export { runWave, type RunWaveResult } from "./wave/run-wave.js";
export type { WaveRunOptions } from "./wave/run-options.js";
export type { WaveHooks, WaveRunResult, WaveSnapshot } from "./wave/wave-agent.js";
export { waveStatus, listWaves, type WaveStatus } from "./wave/wave-status.js";
export { stopWave, waitForWaveStop } from "./wave/stop-wave.js";
export {
  retryWave,
  deleteWave,
  type RetryWaveInput,
  type RetryWaveResult,
} from "./wave/wave-admin.js";
export { pruneStore, type PruneReport } from "./ops/prune.js";
export type { CommandRunner, CommandRun, CommandExit } from "./wave/shell-command.js";
export { HostState, WaveState } from "./domain/wave-state.js";
export type { WaveStore, WaveRecord, WaveHostRecord } from "./store/wave-store.js";
