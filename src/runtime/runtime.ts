import { ErrorCode, QuiesceError } from "../domain/errors.js";
import { EventKind } from "../domain/event.js";
import { runtimeScope } from "../domain/journal-names.js";
import { RunState, type RunRecord } from "../domain/journal-record.js";
import type { MaintenancePolicy } from "../domain/maintenance-policy.js";
import type { RuntimeRecord } from "../domain/runtime-record.js";
import { RuntimeState } from "../domain/runtime-state.js";
import { Journal } from "../journal/journal.js";
import type { Provider } from "../journal/provider.js";
import type { Run } from "../journal/run.js";
import type { Lease } from "../lease/lease.js";
import { hostIdentity } from "../process/process-identity.js";
import type { Store } from "../store/store.js";
import { runDrain, type DrainOptions } from "./drain.js";
import { Notifier } from "../process/notifier.js";
import type { RecordKeeper } from "./record-keeper.js";
import type { StartupReport } from "./startup.js";

/** How a runtime's life ended: its last recorded state, and whether it lost its lease. */
export interface RuntimeOutcome {
  state: RuntimeState;
  leaseLost: boolean;
  reason: string | null;
}

export type StartRunResult =
  { ok: true; run: Run } | { ok: false; reason: "draining" | "stopped"; message: string };

export interface RuntimeParts {
  id: string;
  store: Store;
  lease: Lease;
  policy: MaintenancePolicy;
  providers: readonly Provider[];
  onMessage: (line: string) => void;
}

/**
 * A maintenance-window runtime for one agent process (DESIGN.md, "State machines"): it holds
 * the runtime's lease, journals its runs, and drains on request: `RUNNING -> DRAINING ->
 * QUIESCED -> STOPPED`, or NEEDS_REVIEW when the deadline leaves side effects unclassified.
 * Create it with `startRuntime`/`openRuntime`, which recover what a previous process left
 * before any new work is accepted.
 */
export class Runtime {
  readonly id: string;
  readonly scope: string;
  readonly store: Store;
  readonly lease: Lease;
  readonly policy: MaintenancePolicy;
  readonly journal: Journal;
  /** What startup found and recovered. Set by startRuntime. */
  startup!: StartupReport;
  /** Resolves when the runtime stopped, ended in NEEDS_REVIEW, or lost its lease. */
  readonly done: Promise<RuntimeOutcome>;
  /** @internal */ keeper!: RecordKeeper;
  /** @internal runs this process works on now. */ readonly active = new Set<Run>();
  /** @internal runs being created or resumed (counted as active by the drain). */ starting = 0;
  /** @internal wakes the drain loop. */ readonly changes = new Notifier();
  /** @internal set the moment a drain begins: no new work, runs stop at their next checkpoint. */
  draining = false;
  /** @internal */ drainPromise: Promise<RuntimeOutcome> | null = null;
  /** @internal the drain's "deadline now" switch. */ forceDeadline: (() => void) | null = null;
  /** @internal */ readonly say: (line: string) => void;
  private finish!: (o: RuntimeOutcome) => void;
  private finished: RuntimeOutcome | null = null;
  private readonly cleanups: (() => void)[] = [];

  constructor(p: RuntimeParts) {
    this.id = p.id;
    this.scope = runtimeScope(p.id);
    this.store = p.store;
    this.lease = p.lease;
    this.policy = p.policy;
    this.say = p.onMessage;
    this.done = new Promise((resolve) => (this.finish = resolve));
    this.journal = new Journal(p.store, p.lease, {
      runtimeId: p.id,
      providers: p.providers,
      draining: () => this.draining,
      onChange: (run) => this.runChanged(run),
    });
    const onLost = () => {
      if (this.lease.isReleased) return; // our own release at the end of a drain
      const reason = this.lease.lostReason ?? "lease lost";
      for (const r of this.active) r.abort(new QuiesceError(ErrorCode.LEASE_LOST, reason));
      this.end({ state: this.keeper?.state ?? RuntimeState.RUNNING, leaseLost: true, reason });
    };
    p.lease.signal.addEventListener("abort", onLost, { once: true });
    this.cleanups.push(() => p.lease.signal.removeEventListener("abort", onLost));
  }

  get state(): RuntimeState {
    return this.keeper.state;
  }

  get record(): RuntimeRecord {
    return this.keeper.record;
  }

  /** Takes new work: RUNNING, not draining, lease held. */
  get accepting(): boolean {
    return !this.draining && this.finished === null && this.keeper.state === RuntimeState.RUNNING;
  }

  /** Starts a run, or says why not (draining, stopped) without throwing. The refusal is logged. */
  async tryStartRun(o: { runId?: string; checkpoint?: unknown } = {}): Promise<StartRunResult> {
    const refused = await this.refusal(o.runId);
    if (refused) return refused;
    this.starting++;
    try {
      return { ok: true, run: await this.journal.createRun(o) };
    } finally {
      this.starting--;
      this.changes.notify();
    }
  }

  /** Like tryStartRun, but a refusal is a WORK_REFUSED error. */
  async startRun(o: { runId?: string; checkpoint?: unknown } = {}): Promise<Run> {
    const r = await this.tryStartRun(o);
    if (r.ok) return r.run;
    throw new QuiesceError(ErrorCode.WORK_REFUSED, r.message, { details: { reason: r.reason } });
  }

  /** Runs of this runtime stopped at a checkpoint (by a drain or a crash), ready to resume. */
  async resumable(): Promise<RunRecord[]> {
    const { runs } = await this.store.journal.listRuns({
      runtimeId: this.id,
      state: RunState.SUSPENDED,
    });
    return runs.reverse();
  }

  /** Continues a suspended run in this process (validated and recovered first). */
  async resume(runId: string): Promise<Run> {
    const refused = await this.refusal(runId);
    if (refused)
      throw new QuiesceError(ErrorCode.WORK_REFUSED, refused.message, {
        details: { reason: refused.reason },
      });
    this.starting++;
    try {
      return await this.journal.resume(runId);
    } finally {
      this.starting--;
      this.changes.notify();
    }
  }

  /**
   * Drains: DRAINING is committed at once (no new work from then on); active runs continue to
   * their next checkpoint or the deadline; then QUIESCED (only with nothing unclassified in
   * flight) and STOPPED, or NEEDS_REVIEW. The lease is released at the end. Idempotent.
   */
  drain(o: DrainOptions = {}): Promise<RuntimeOutcome> {
    this.drainPromise ??= runDrain(this, o).then(
      (outcome) => this.end(outcome),
      (e: unknown) => {
        this.say(`drain failed: ${(e as Error).message}`);
        return this.end({
          state: this.keeper.state,
          leaseLost: this.lease.lost,
          reason: (e as Error).message,
        });
      },
    );
    return this.drainPromise;
  }

  /** Drains with the policy's timeout and stops. */
  stop(reason = "stopped by its owner"): Promise<RuntimeOutcome> {
    if (this.finished) return Promise.resolve(this.finished);
    return this.drain({ reason });
  }

  /** @internal registered by watchers (maintenance poll, signals) to undo at the end. */
  onEnd(cleanup: () => void): void {
    this.cleanups.push(cleanup);
  }

  /** @internal */
  end(outcome: RuntimeOutcome): RuntimeOutcome {
    if (this.finished) return this.finished;
    this.finished = outcome;
    for (const c of this.cleanups.splice(0)) c();
    this.changes.notify();
    this.finish(outcome);
    return outcome;
  }

  private runChanged(run: Run): void {
    if (run.state === RunState.ACTIVE) this.active.add(run);
    else this.active.delete(run);
    this.changes.notify();
  }

  private async refusal(
    runId: string | undefined,
  ): Promise<Extract<StartRunResult, { ok: false }> | null> {
    if (this.accepting) return null;
    const reason = this.draining && this.finished === null ? "draining" : "stopped";
    const mw = this.keeper.record.maintenanceId;
    const message =
      `runtime ${this.id} is ${this.draining && this.finished === null ? "draining" : this.keeper.state.toLowerCase()}` +
      `${mw ? ` (maintenance ${mw})` : ""}: it accepts no new work${runId ? ` (run ${runId} refused)` : ""}`;
    await this.store.events
      .record({
        kind: EventKind.RuntimeWorkRefused,
        scope: this.scope,
        token: this.lease.token,
        runId: runId ?? null,
        host: hostIdentity().host,
        pid: process.pid,
        message,
        detail: { runtimeId: this.id, maintenanceId: mw, state: this.keeper.state },
      })
      .catch(() => undefined);
    this.changes.notify();
    return { ok: false, reason, message };
  }
}
