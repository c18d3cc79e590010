import { ErrorCode, QuiesceError, isQuiesceError } from "../domain/errors.js";
import { EventKind } from "../domain/event.js";
import { runtimeScope, validateRuntimeId } from "../domain/journal-names.js";
import { RunState } from "../domain/journal-record.js";
import { parsePolicy, type MaintenancePolicy } from "../domain/maintenance-policy.js";
import type { RuntimeRecord } from "../domain/runtime-record.js";
import { RuntimeState, startupPlan } from "../domain/runtime-state.js";
import { toMs } from "../domain/duration.js";
import type { RunRecovery } from "../journal/recover-run.js";
import type { Provider } from "../journal/provider.js";
import type { Leases } from "../lease/leases.js";
import { hostIdentity } from "../process/process-identity.js";
import { RecordKeeper, runningRecord } from "./record-keeper.js";
import { Runtime } from "./runtime.js";
import { watchMaintenanceRequests, handleSignals } from "./watch.js";

export interface RuntimeOptions {
  /** The runtime's stable name (`agent-1`): the same across restarts of the same agent. */
  id: string;
  providers?: readonly Provider[];
  /** Policy keys as written in a config file (drain_timeout, on_deadline, ...), or parsed. */
  policy?: MaintenancePolicy | Record<string, unknown>;
  /** The runtime lease's TTL (default 15s) and heartbeat (default TTL/3). */
  ttl?: string | number;
  heartbeat?: string | number;
  /** How long to wait for a previous process's lease (it must expire and its owner be shown
   * dead; default 2 x TTL + 5s). */
  wait?: string | number;
  /** How often to look for a maintenance request (default 250 ms: noticed within a second). */
  pollMs?: number;
  /** Drain on SIGTERM/SIGINT/SIGHUP (a second signal forces the deadline). Default false. */
  signals?: boolean;
  onMessage?: (line: string) => void;
}

/** What a new process found and did before accepting work. */
export interface StartupReport {
  runtimeId: string;
  found: string;
  previous: {
    state: RuntimeState;
    incarnation: string;
    maintenanceId: string | null;
    updatedAt: number;
  } | null;
  recovered: RunRecovery[];
  summary: string;
}

const isPolicy = (p: unknown): p is MaintenancePolicy =>
  typeof p === "object" && p !== null && "drainTimeoutMs" in p;

/**
 * Starts a runtime: takes its lease (waiting for a dead predecessor's to be taken over), reads
 * the record the previous process left and, if that never reached QUIESCED, recovers every run
 * it left active BEFORE accepting any work; then records RUNNING and says what it found.
 */
export async function startRuntime(leases: Leases, o: RuntimeOptions): Promise<Runtime> {
  const id = validateRuntimeId(o.id);
  const policy = isPolicy(o.policy) ? o.policy : parsePolicy(o.policy, "policy");
  const ttlMs = o.ttl === undefined ? 15_000 : toMs(o.ttl, "ttl");
  const waitMs = o.wait === undefined ? 2 * ttlMs + 5000 : toMs(o.wait, "wait");
  const say = o.onMessage ?? (() => undefined);
  const r = await leases.tryAcquire(runtimeScope(id), {
    ttl: ttlMs,
    heartbeat: o.heartbeat,
    wait: waitMs,
    command: `quiesce runtime ${id}`,
    onWait: (p) => say(`waiting for the runtime lease: ${p.message}`),
  });
  if (!r.ok)
    throw new QuiesceError(
      ErrorCode.LEASE_HELD,
      `runtime ${id} is held by another process: ${r.message}`,
      {
        details: { runtimeId: id, holder: r.holder },
      },
    );
  const rt = new Runtime({
    id,
    store: leases.store,
    lease: r.lease,
    policy,
    providers: o.providers ?? [],
    onMessage: say,
  });
  try {
    rt.startup = await begin(rt);
  } catch (e) {
    await r.lease
      .release(`runtime ${id} failed to start: ${(e as Error).message}`)
      .catch(() => undefined);
    throw e;
  }
  say(rt.startup.summary);
  watchMaintenanceRequests(rt, o.pollMs ?? 250);
  if (o.signals) handleSignals(rt);
  return rt;
}

async function begin(rt: Runtime): Promise<StartupReport> {
  const { runtime: prev } = await rt.store.journal.getRuntime(rt.id);
  const plan = startupPlan(prev && { state: prev.state, maintenanceId: prev.maintenanceId });
  const lease = rt.lease;
  const { mine, running } = runningRecord(lease, rt.policy);
  if (prev === null) {
    rt.keeper = await RecordKeeper.create(rt.store, lease, {
      ...running,
      runtimeId: rt.id,
      scope: rt.scope,
      note: plan.found,
    });
    return {
      runtimeId: rt.id,
      found: plan.found,
      previous: null,
      recovered: [],
      summary: `runtime ${rt.id} started: ${plan.found}`,
    };
  }
  rt.keeper = new RecordKeeper(rt.store, lease, prev);
  if (plan.first)
    await rt.keeper.transition(plan.first.to, {
      ...mine,
      acceptingWork: false,
      note: plan.first.reason,
      reviewReason:
        plan.first.to === RuntimeState.NEEDS_REVIEW ? plan.first.reason : prev.reviewReason,
    });
  const recovered = plan.recover ? await recoverOrphans(rt) : [];
  const summary = describe(rt.id, plan.found, recovered);
  // A maintenance request made before this process took the lease was for its predecessor.
  const stale =
    prev.request !== null && prev.request.at < lease.record.acquiredAt
      ? prev.request.maintenanceId
      : null;
  await rt.keeper.write({ ...running, note: summary }, stale);
  const report: StartupReport = {
    runtimeId: rt.id,
    found: plan.found,
    previous: {
      state: prev.state,
      incarnation: prev.incarnation,
      maintenanceId: prev.maintenanceId,
      updatedAt: prev.updatedAt,
    },
    recovered,
    summary,
  };
  if (plan.recover || plan.first) await recordRecovery(rt, report);
  return report;
}

/** Every run the previous process left active (it died while working on them). */
async function recoverOrphans(rt: Runtime): Promise<RunRecovery[]> {
  const { runs } = await rt.store.journal.listRuns({
    runtimeId: rt.id,
    state: RunState.ACTIVE,
    limit: 10_000,
  });
  const out: RunRecovery[] = [];
  for (const run of runs.reverse()) {
    try {
      out.push(await rt.journal.recover(run.runId));
    } catch (e) {
      if (isQuiesceError(e, "LEASE_LOST")) throw e;
      out.push({
        runId: run.runId,
        before: run.state,
        after: run.state,
        seq: run.seq,
        effects: [],
        problems: [],
        error: (e as Error).message,
        summary: `recovery failed: ${(e as Error).message}`,
      });
    }
  }
  return out;
}

function describe(id: string, found: string, recovered: readonly RunRecovery[]): string {
  if (recovered.length === 0) return `runtime ${id} started: ${found}`;
  const review = recovered.filter((r) => r.after === RunState.NEEDS_REVIEW).length;
  const lines = recovered.map((r) => `run ${r.runId}: ${r.summary}`);
  return `runtime ${id} started: ${found}; recovered ${recovered.length} run(s)${review ? `, ${review} need review` : ""}: ${lines.join("; ")}`;
}

async function recordRecovery(rt: Runtime, report: StartupReport): Promise<void> {
  await rt.store.events.record({
    kind: EventKind.RuntimeRecovered,
    scope: rt.scope,
    token: rt.lease.token,
    runId: rt.lease.runId,
    host: hostIdentity().host,
    pid: process.pid,
    message: report.summary,
    detail: { found: report.found, previous: report.previous, recovered: report.recovered },
  });
}

export type { RuntimeRecord };
