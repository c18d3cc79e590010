import { ErrorCode, QuiesceError } from "../domain/errors.js";
import { EventKind } from "../domain/event.js";
import { describeFenceFailure } from "../domain/fencing.js";
import type { RuntimeRecord, RuntimeWrite } from "../domain/runtime-record.js";
import { assertRuntimeTransition, RuntimeState } from "../domain/runtime-state.js";
import type { MaintenancePolicy } from "../domain/maintenance-policy.js";
import type { Lease } from "../lease/lease.js";
import { hostIdentity } from "../process/process-identity.js";
import type { JournalResult } from "../store/journal-store.js";
import type { Store } from "../store/store.js";

export type RecordPatch = Partial<Omit<RuntimeWrite, "runtimeId" | "scope" | "version" | "token">>;

/**
 * Owns this process's copy of the runtime record and writes every change of it: a
 * compare-and-swap on the record's version, fenced by the runtime's lease (I3), one commit
 * each, with a `runtime.transition` event in the same commit when the state changes.
 */
export class RecordKeeper {
  private lock: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly lease: Lease,
    public record: RuntimeRecord,
  ) {}

  /** Creates the record of a runtime that never had one (first start), state RUNNING. */
  static async create(
    store: Store,
    lease: Lease,
    w: Omit<RuntimeWrite, "version" | "token">,
  ): Promise<RecordKeeper> {
    const rec: RuntimeWrite = { ...w, version: 1, token: lease.token };
    const keeper = new RecordKeeper(store, lease, {
      ...rec,
      startedAt: rec.startedAt ?? 0,
      updatedAt: 0,
      request: null,
    });
    const r = await store.journal.putRuntime({
      token: lease.token,
      expectedVersion: null,
      record: rec,
      consumeRequest: null,
      event: keeper.transitionEvent(null, rec),
    });
    if (!r.ok) throw keeper.refused(r);
    keeper.record = { ...rec, startedAt: rec.startedAt ?? r.now, updatedAt: r.now, request: null };
    return keeper;
  }

  get state(): RuntimeState {
    return this.record.state;
  }

  /** A state transition the state machine must allow (RUNNING -> DRAINING, ...). */
  transition(to: RuntimeState, patch: RecordPatch = {}, consumeRequest: string | null = null) {
    assertRuntimeTransition(this.record.runtimeId, this.record.state, to);
    return this.write({ ...patch, state: to }, consumeRequest);
  }

  /** Writes `patch` over the current record; serialized, so writes never interleave. */
  write(patch: RecordPatch, consumeRequest: string | null = null): Promise<RuntimeRecord> {
    const next = this.lock.then(() => this.doWrite(patch, consumeRequest));
    this.lock = next.catch(() => undefined);
    return next;
  }

  private async doWrite(patch: RecordPatch, consumeRequest: string | null): Promise<RuntimeRecord> {
    const cur = this.record;
    const rec: RuntimeWrite = {
      ...cur,
      ...patch,
      startedAt: patch.startedAt ?? null,
      version: cur.version + 1,
      token: this.lease.token,
    };
    const from = cur.state;
    const r = await this.store.journal.putRuntime({
      token: this.lease.token,
      expectedVersion: cur.version,
      record: rec,
      consumeRequest,
      ...(rec.state !== from ? { event: this.transitionEvent(from, rec) } : {}),
    });
    if (!r.ok) throw this.refused(r);
    const consumed = consumeRequest !== null && cur.request?.maintenanceId === consumeRequest;
    this.record = {
      ...rec,
      startedAt: rec.startedAt ?? cur.startedAt,
      updatedAt: r.now,
      request: consumed ? null : cur.request,
    };
    return this.record;
  }

  private refused(r: Extract<JournalResult, { ok: false }>): QuiesceError {
    const id = this.record.runtimeId;
    if (r.reason === "conflict" || r.reason === "missing" || r.reason === "duplicate")
      return new QuiesceError(
        ErrorCode.INTERNAL,
        `the record of runtime ${id} changed under this process (${r.reason}); another process writes it?`,
      );
    const why = describeFenceFailure(
      this.record.scope,
      this.lease.token,
      r.reason,
      r.current,
      r.now,
    );
    this.lease.markLost(`the runtime record write was refused: ${why}`);
    return new QuiesceError(ErrorCode.LEASE_LOST, `runtime ${id}: ${why}`);
  }

  private transitionEvent(from: RuntimeState | null, to: RuntimeWrite) {
    const parts = [`runtime ${to.runtimeId}: ${from ?? "(new)"} -> ${to.state}`];
    if (to.maintenanceId) parts.push(`maintenance ${to.maintenanceId}`);
    if (to.note) parts.push(to.note);
    return {
      kind: EventKind.RuntimeTransition,
      scope: to.scope,
      token: this.lease.token,
      runId: to.incarnation,
      host: hostIdentity().host,
      pid: process.pid,
      message: parts.join("; "),
      detail: {
        runtimeId: to.runtimeId,
        from,
        to: to.state,
        maintenanceId: to.maintenanceId,
        activeRuns: to.activeRuns,
        deadlineAt: to.deadlineAt,
        note: to.note,
        reviewReason: to.reviewReason,
      },
    };
  }
}

/**
 * This process's identity on a runtime record, and the RUNNING record it writes on taking
 * over (the agent runtime and the wave agent start their maintenance window alike).
 */
export function runningRecord(lease: Lease, policy: MaintenancePolicy) {
  const mine = { incarnation: lease.runId, host: hostIdentity().host, pid: process.pid };
  const running = {
    ...mine,
    state: RuntimeState.RUNNING,
    maintenanceId: null,
    acceptingWork: true,
    activeRuns: 0,
    startedAt: lease.record.acquiredAt,
    deadlineAt: null,
    policy,
    reviewReason: null,
  };
  return { mine, running };
}
