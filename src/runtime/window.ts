import { RuntimeState } from "../domain/runtime-state.js";
import { crashPoint } from "../fault/crash-points.js";
import type { Store } from "../store/store.js";
import type { RecordKeeper } from "./record-keeper.js";

export interface DrainStart {
  maintenanceId: string;
  timeoutMs: number;
  note: string;
  activeRuns: number;
  /** Called once when the drain deadline passes (or is forced now). */
  onDeadline: () => void;
}

/**
 * The steps of the maintenance-window protocol that every workload shares (the agent runtime's
 * runs, the wave agent's hosts): DRAINING committed with its deadline before anything else
 * (I8), the deadline's timer and its "now" switch, and the ending, NEEDS_REVIEW or QUIESCED
 * then STOPPED, each persisted. What "in flight" means and what the deadline does to it stays
 * with the workload.
 */
export class MaintenanceWindow {
  private timer: NodeJS.Timeout | null = null;
  private onDeadline: (() => void) | null = null;

  constructor(
    private readonly keeper: RecordKeeper,
    private readonly store: Store,
  ) {}

  /** Arms the deadline, then records DRAINING (unless the record has moved on already). */
  async enterDraining(o: DrainStart): Promise<void> {
    this.onDeadline = o.onDeadline;
    // Not unref'd: a drain in progress keeps the process alive until it ends or its deadline.
    this.timer = setTimeout(() => this.forceDeadline(), o.timeoutMs);
    if (this.keeper.state !== RuntimeState.RUNNING) return;
    await this.keeper.transition(
      RuntimeState.DRAINING,
      {
        maintenanceId: o.maintenanceId,
        acceptingWork: false,
        deadlineAt: (await this.store.now()) + o.timeoutMs,
        activeRuns: o.activeRuns,
        note: o.note,
      },
      o.maintenanceId,
    );
  }

  /** The deadline is now (a second signal, a forced stop). Idempotent. */
  forceDeadline(): void {
    this.cancel();
    const f = this.onDeadline;
    this.onDeadline = null;
    f?.();
  }

  /** Stops the deadline's timer (the drain ended first). */
  cancel(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * Records the end once nothing is in flight: DRAINING first if the window never drained (a
   * workload that simply finished), then NEEDS_REVIEW with `review`, or QUIESCED -> STOPPED.
   */
  async end(o: { maintenanceId: string; note: string; review: string | null }): Promise<void> {
    this.cancel();
    if (this.keeper.state === RuntimeState.RUNNING)
      await this.keeper.transition(
        RuntimeState.DRAINING,
        { maintenanceId: o.maintenanceId, acceptingWork: false, activeRuns: 0, note: o.note },
        null,
      );
    if (this.keeper.state !== RuntimeState.DRAINING) return;
    if (o.review !== null) {
      await this.keeper.transition(RuntimeState.NEEDS_REVIEW, {
        activeRuns: 0,
        note: o.note,
        reviewReason: o.review,
      });
      return;
    }
    await this.keeper.transition(RuntimeState.QUIESCED, { activeRuns: 0, note: o.note });
    crashPoint("runtime.after-quiesced");
    await this.keeper.transition(RuntimeState.STOPPED, { activeRuns: 0, note: o.note });
  }
}
