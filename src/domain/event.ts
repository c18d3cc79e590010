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
  /** An acquirer found the lease past its expiry and not released. Recorded once per token. */
  LeaseExpired: "lease.expired",
  /** A fenced write with a stale token or under an expired lease was refused (I3). */
  FencedWriteRejected: "lease.fenced_write_rejected",
} as const;
export type EventKind = (typeof EventKind)[keyof typeof EventKind];

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
