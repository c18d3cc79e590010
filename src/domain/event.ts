/** Kinds of events in the store's log (`quiesce events`). */
export const EventKind = {
  LeaseAcquired: "lease.acquired",
  LeaseReleased: "lease.released",
  /** A release that came too late: the token was no longer current or the lease had expired. */
  LeaseReleaseRejected: "lease.release_rejected",
  /** A renewal did not go through (store error); the holder keeps trying until its deadline. */
  LeaseRenewFailed: "lease.renew_failed",
  /** The holder gave the lease up as lost (self-fencing, I4). */
  LeaseLost: "lease.lost",
  /**
   * The lease lapsed only after the work under it had ended (a holder stopped or starved past
   * its deadline after its command exited): recorded, but not a loss; the work's result stands.
   */
  LeaseLapsedAfterExit: "lease.lapsed_after_exit",
  /** An acquirer found the lease past its expiry and not released. Recorded once per token. */
  LeaseExpired: "lease.expired",
  /** A fenced write with a stale token or under an expired lease was refused (I3). */
  FencedWriteRejected: "lease.fenced_write_rejected",
  /** A stale lease was taken over after its owner was shown dead; detail has the evidence. */
  LeaseTakenOver: "lease.taken_over",
  /** A takeover was refused: owner alive, death unproven, or a foreign system's lease. */
  LeaseTakeoverRefused: "lease.takeover_refused",
  /** An operator broke a lease (`quiesce lock break`); detail is the incident record. */
  LeaseBroken: "lease.broken",
  /** An alert could not be delivered to a sink after its retries. */
  AlertFailed: "alert.failed",
  /** A runtime changed state (RUNNING, DRAINING, QUIESCED, STOPPED, NEEDS_REVIEW). */
  RuntimeTransition: "runtime.transition",
  /** A draining or stopped runtime refused new work. */
  RuntimeWorkRefused: "runtime.work_refused",
  /** A new process found its predecessor's record and ran recovery; detail says what it found. */
  RuntimeRecovered: "runtime.recovered",
  /** Someone asked a runtime to drain (`quiesce maintenance start`). */
  MaintenanceRequested: "maintenance.requested",
  /** An effect went to NEEDS_REVIEW: nobody can tell whether it landed. */
  EffectQuarantined: "journal.effect_quarantined",
  /** Recovery settled an effect (lookup, replay, record); detail has how. */
  EffectRecovered: "journal.effect_recovered",
  /**
   * A lookup said a dispatched effect never landed, so it goes back to PLANNED and will be sent
   * again (a wave host patched a second time): recorded, since the first dispatch did leave.
   */
  EffectRedispatch: "journal.effect_redispatch",
  /** A human resolved an effect (`quiesce runs resolve`). */
  EffectResolved: "journal.effect_resolved",
  /** An acknowledgement arrived for an effect already quarantined; detail has what it said. */
  EffectLateAck: "journal.effect_late_ack",
  /** A run went to NEEDS_REVIEW (a quarantined effect, a record that failed validation, ...). */
  RunNeedsReview: "journal.run_needs_review",
  /** A rolling patch wave was created (`quiesce wave create`). */
  WaveCreated: "wave.created",
  /** A wave changed state (running, stopped, halted, completed); detail has why. */
  WaveStateChanged: "wave.state",
  /** A host of a wave reached succeeded, failed, unfinished, needs_review or skipped. */
  WaveHostChanged: "wave.host",
  /** `wave retry`: failed hosts were put back to pending; detail lists them. */
  WaveRetried: "wave.retried",
  /** `wave delete`: a wave and its hosts were deleted. */
  WaveDeleted: "wave.deleted",
  /** `store prune`: finished runs, waves and old events were deleted; detail has the counts. */
  StorePruned: "store.pruned",
} as const;
export type EventKind = (typeof EventKind)[keyof typeof EventKind];

/**
 * Events a run writes about itself while it works. The run-activity probe counts only these:
 * an expiry or a refused takeover is written by somebody else, and a loss or a late release is
 * the run saying it stopped, not that it works on.
 */

export const HOLDER_ACTIVITY_KINDS: readonly EventKind[] = [
  EventKind.LeaseAcquired,
  EventKind.LeaseTakenOver,
  EventKind.LeaseRenewFailed,
];

export interface EventInput {
  kind: EventKind;
  scope: string | null;
  token: number | null;
  runId: string | null;
  host: string | null;
  pid: number | null;
  /** One sentence a human reads in `quiesce events`. */
  message: string;
  detail?: Record<string, unknown>;
}

export interface EventRecord extends EventInput {
  id: number;
  /** Store clock, epoch ms. */
  at: number;
  detail: Record<string, unknown>;
}
