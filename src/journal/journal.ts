import { timeOrderedUuid } from "../process/random-uuid.js";
import { ErrorCode, QuiesceError, invalidInput } from "../domain/errors.js";
import type { EventInput } from "../domain/event.js";
import { describeFenceFailure, type FenceFailure } from "../domain/fencing.js";
import { validateRunId, validateRuntimeId } from "../domain/journal-names.js";
import { RunState, toJsonText } from "../domain/journal-record.js";
import type { Lease } from "../lease/lease.js";
import type { RunSnapshot } from "../store/journal-store.js";
import type { Store } from "../store/store.js";
import { GroupCommit } from "../store/group-commit.js";
import { type Provider, ProviderRegistry } from "./provider.js";
import { recoverRun, type RunRecovery } from "./recover-run.js";
import { Run, type RunHost } from "./run.js";

export interface JournalOptions {
  /** The runtime the runs belong to (a Runtime passes its id; a bare Journal names one). */
  runtimeId: string;
  providers?: readonly Provider[] | ProviderRegistry;
  /** True while the owner drains: runs stop at their next checkpoint. */
  draining?: () => boolean;
  /** A run's state or in-flight effects changed. */
  onChange?: (run: Run) => void;
}

/**
 * The side-effect journal of one lease holder: creates runs, takes over runs a previous holder
 * left, and recovers them (I9). All its runs' writes go through one group commit and are
 * fenced by `lease` (I3). A Runtime wraps this with the maintenance-window protocol.
 */
export class Journal {
  readonly store: Store;
  readonly lease: Lease;
  readonly runtimeId: string;
  readonly providers: ProviderRegistry;
  readonly writer: GroupCommit;
  private readonly host: RunHost;

  constructor(store: Store, lease: Lease, o: JournalOptions) {
    this.store = store;
    this.lease = lease;
    this.runtimeId = validateRuntimeId(o.runtimeId);
    this.providers =
      o.providers instanceof ProviderRegistry
        ? o.providers
        : new ProviderRegistry(o.providers ?? []);
    // Commits that cannot reach the store are retried while the lease is surely ours.
    this.writer = new GroupCommit(store.journal, lease);
    const draining = o.draining ?? (() => false);
    const onChange = o.onChange ?? (() => undefined);
    this.host = {
      lease,
      writer: this.writer,
      providers: this.providers,
      draining,
      changed: onChange,
      recordEvent: (e: EventInput) => store.events.record(e),
    };
  }

  /** Starts a run (state active, checkpoint sequence 0) under the lease. */
  async createRun(o: { runId?: string; checkpoint?: unknown } = {}): Promise<Run> {
    const runId = validateRunId(o.runId ?? `run-${timeOrderedUuid()}`, "run id");
    this.lease.assertHeld();
    const checkpoint = o.checkpoint === undefined ? null : toJsonText(o.checkpoint);
    const r = await this.writer.submit({
      kind: "create_run",
      token: this.lease.token,
      run: { runId, runtimeId: this.runtimeId, scope: this.lease.scope, checkpoint },
    });
    if (!r.ok) {
      if (r.reason === "duplicate") throw invalidInput(`run ${runId} already exists`);
      const why = describeFenceFailure(
        this.lease.scope,
        this.lease.token,
        r.reason as FenceFailure,
        r.current,
        r.now,
      );
      this.lease.markLost(`a journal write was refused: ${why}`);
      throw new QuiesceError(ErrorCode.LEASE_LOST, `cannot start run ${runId}: ${why}`);
    }
    const run = this.adopt({
      run: {
        runId,
        runtimeId: this.runtimeId,
        scope: this.lease.scope,
        state: RunState.ACTIVE,
        seq: 0,
        token: this.lease.token,
        checkpoint,
        reviewReason: null,
        createdAt: r.now,
        updatedAt: r.now,
      },
      effects: [],
    });
    this.host.changed(run);
    return run;
  }

  /** A Run object over a stored run; its writes are fenced by this journal's lease. */
  adopt(snapshot: Pick<RunSnapshot, "run" | "effects">): Run {
    if (snapshot.run.scope !== this.lease.scope)
      throw invalidInput(
        `run ${snapshot.run.runId} belongs to ${snapshot.run.scope}, not to ${this.lease.scope}`,
      );
    return new Run(this.host, snapshot);
  }

  async load(runId: string): Promise<RunSnapshot> {
    const snap = await this.store.journal.getRun(runId);
    if (!snap) throw invalidInput(`no run ${runId} in the journal`);
    return snap;
  }

  /** Recovers one run a previous holder left (validation, lookups, replays): see recoverRun. */
  async recover(runId: string): Promise<RunRecovery> {
    return recoverRun(this, await this.load(runId));
  }

  /**
   * Continues a run under this lease. It is recovered first, whatever its state (validated,
   * what may have landed settled, PLANNED effects sent), then made active; a run that needs
   * review refuses (NEEDS_REVIEW), and a provider error that stopped recovery is thrown.
   */
  async resume(runId: string): Promise<Run> {
    const r = await recoverRun(this, await this.load(runId));
    if (r.error !== null) throw r.cause;
    const run = this.adopt(await this.load(runId));
    await run.activate();
    return run;
  }
}
