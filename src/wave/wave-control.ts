import { formatDuration } from "../domain/duration.js";
import { waveRuntimeId, waveScope } from "../domain/wave-input.js";
import { RuntimeState, startupPlan } from "../domain/runtime-state.js";
import type { MaintenancePolicy } from "../domain/maintenance-policy.js";
import type { Lease } from "../lease/lease.js";
import { RecordKeeper, runningRecord } from "../runtime/record-keeper.js";
import { Notifier } from "../process/notifier.js";
import type { Store } from "../store/store.js";
import { onStopSignals } from "../process/stop-signals.js";
import { watchRequests } from "../runtime/request-watcher.js";
import { MaintenanceWindow } from "../runtime/window.js";

export interface ControlOptions {
  wave: string;
  policy: MaintenancePolicy;
  say: (line: string) => void;
  /** How often to look for `wave stop` (a maintenance request). */
  pollMs: number;
  /** Stop gracefully on SIGTERM/SIGINT/SIGHUP; a second signal stops the hosts in flight. An
   * uncaught error (a bug of ours) stops them too, and the agent records and releases first. */
  signals: boolean;
  /** How long a stopped command gets between SIGTERM and SIGKILL (bounds the last resort). */
  graceMs: number;
}

/**
 * The wave agent's side of the maintenance-window protocol (src/runtime): its runtime record
 * (`wave:NAME`, fenced by the wave's lease) moves RUNNING -> DRAINING -> QUIESCED -> STOPPED
 * (or NEEDS_REVIEW), persisted at every step. `wave stop` and `quiesce maintenance start
 * wave:NAME` write a maintenance request the agent polls for; a drain starts no new host and
 * lets the hosts in flight finish, until the drain deadline, which stops them (force).
 */
export class WaveControl {
  readonly changes = new Notifier();
  draining = false;
  drainReason: string | null = null;
  forced = false;
  forceReason: string | null = null;
  /** The first signal received, for the exit code. */
  signal: NodeJS.Signals | null = null;
  /** An uncaught error in this process: a forced stop, then the agent reports it (exit 1). */
  fatal: Error | null = null;
  /** What the runtime record said about the previous agent. */
  found = "";
  private readonly forceHooks: ((why: string) => void)[] = [];
  private readonly cleanups: (() => void)[] = [];
  private maintenanceId: string | null = null;

  private constructor(
    private readonly store: Store,
    private readonly lease: Lease,
    private readonly o: ControlOptions,
    public keeper: RecordKeeper,
  ) {
    this.window = new MaintenanceWindow(keeper, store);
  }
  private readonly window: MaintenanceWindow;

  static async start(store: Store, lease: Lease, o: ControlOptions): Promise<WaveControl> {
    const id = waveRuntimeId(o.wave);
    const { runtime: prev } = await store.journal.getRuntime(id);
    const plan = startupPlan(prev && { state: prev.state, maintenanceId: prev.maintenanceId });
    const { mine, running: base } = runningRecord(lease, o.policy);
    const running = {
      ...base,
      note: `wave agent: ${plan.found}`,
    };

    let keeper: RecordKeeper;
    if (prev === null) {
      keeper = await RecordKeeper.create(store, lease, {
        ...running,
        runtimeId: id,
        scope: waveScope(o.wave),
      });
    } else {
      keeper = new RecordKeeper(store, lease, prev);
      if (plan.first)
        await keeper.transition(plan.first.to, {
          ...mine,
          acceptingWork: false,
          note: plan.first.reason,
          reviewReason: plan.first.to === RuntimeState.NEEDS_REVIEW ? plan.first.reason : null,
        });
      // A stop requested before this agent took the lease was meant for its predecessor.
      const stale =
        prev.request !== null && prev.request.at < lease.record.acquiredAt
          ? prev.request.maintenanceId
          : null;
      await keeper.write(running, stale);
    }
    const c = new WaveControl(store, lease, o, keeper);
    c.found = plan.found;
    c.watch();
    return c;
  }

  /** Called with the reason when the hosts in flight must be stopped now. */
  onForce(fn: (why: string) => void): void {
    this.forceHooks.push(fn);
  }

  /** Starts a drain: no new host from now on; the hosts in flight finish (until the deadline). */
  async drain(
    reason: string,
    maintenanceId: string,
    drainTimeoutMs: number | null,
    hint = "",
  ): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    this.drainReason = reason;
    this.maintenanceId = maintenanceId;
    this.changes.notify();
    const timeout = drainTimeoutMs ?? this.o.policy.drainTimeoutMs;
    this.o.say(
      `${reason}: starting no new host; the hosts in flight finish (deadline in ${formatDuration(timeout)})${hint}`,
    );
    await this.window.enterDraining({
      maintenanceId,
      timeoutMs: timeout,
      activeRuns: 0,
      note: `${reason}; drain timeout ${formatDuration(timeout)}`,
      onDeadline: () =>
        this.force(`the drain deadline (${formatDuration(timeout)}) of ${maintenanceId} passed`),
    });
  }

  /** Stops the hosts in flight now: their patch commands get SIGTERM (SIGKILL after the grace). */
  force(why: string): void {
    if (this.forced) return;
    this.forced = true;
    this.forceReason = why;
    this.o.say(`${why}: stopping the hosts in flight`);
    for (const f of this.forceHooks) f(why);
    this.changes.notify();
  }

  /**
   * Records the end: DRAINING (unless already), then QUIESCED -> STOPPED, or NEEDS_REVIEW when
   * a host's patch is left unclassified (quarantined, or cut off while it ran).
   */
  async finish(note: string, review: string | null): Promise<void> {
    // Called once every host in flight has ended.
    await this.window.end({
      maintenanceId: this.maintenanceId ?? `wave-end-${Date.now()}`,
      note,
      review,
    });
  }

  close(): void {
    this.window.cancel();
    for (const c of this.cleanups.splice(0)) c();
  }

  private watch(): void {
    this.cleanups.push(
      watchRequests(
        this.store,
        this.keeper.record.runtimeId,
        this.o.pollMs,
        {
          accepting: () => !this.draining && !this.lease.lost,
          done: () => this.draining,
          onRequest: (req) =>
            this.drain(
              `stop requested by ${req.by} (${req.maintenanceId})`,
              req.maintenanceId,
              req.drainTimeoutMs,
            ),
        },
        this.o.pollMs,
      ),
    );
    if (!this.o.signals) return;
    this.cleanups.push(
      onStopSignals({
        graceful: (sig) => {
          this.signal = sig;
          void this.drain(
            // The reason is recorded on the wave; the hint is for the terminal only.
            `${sig} received`,
            `${sig.toLowerCase()}-${Date.now()}`,
            null,
            `; ${sig} again stops them now`,
          ).catch((e: unknown) =>
            this.o.say(`could not record the drain: ${(e as Error).message}`),
          );
        },
        forceful: (sig) => this.force(`${sig} received twice`),
        fatal: (e) => {
          if (this.fatal !== null) return;
          this.fatal = e;
          this.force(`internal error: ${e.message}`);
        },
        // If recording and releasing hang after a forced stop, exit anyway: the leases expire.
        watchdog: {
          ms: Math.max(30_000, this.o.graceMs + 10_000),
          exitCode: (cause) => (cause === "fatal" ? 1 : 128 + 15),
        },
      }),
    );
  }
}
