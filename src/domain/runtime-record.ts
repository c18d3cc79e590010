import type { MaintenancePolicy } from "./maintenance-policy.js";
import type { RuntimeState } from "./runtime-state.js";

/** A pending request to drain, written by `quiesce maintenance start` (not by the runtime). */
export interface MaintenanceRequest {
  maintenanceId: string;
  drainTimeoutMs: number | null;
  /** Store clock, epoch ms. */
  at: number;
  /** Who asked: `user@host`. */
  by: string;
}

/** The runtime record, persisted at every transition (one row per runtime id). */
export interface RuntimeRecord {
  runtimeId: string;
  /** The lease scope the runtime holds (`runtime:ID`); its runs are fenced by it. */
  scope: string;
  state: RuntimeState;
  /** +1 at every write: the compare-and-swap that keeps two writers from interleaving. */
  version: number;
  /** The lease run id of the process that wrote the record (one per process life). */
  incarnation: string;
  token: number;
  host: string | null;
  pid: number | null;
  maintenanceId: string | null;
  acceptingWork: boolean;
  /** Runs active at the last transition. */
  activeRuns: number;
  /** Store clock, epoch ms, of this process's start. */
  startedAt: number;
  /** The drain deadline (store clock), while or after DRAINING. */
  deadlineAt: number | null;
  policy: MaintenancePolicy;
  /** The last notable decision: what startup found, or what the deadline did. */
  note: string | null;
  reviewReason: string | null;
  updatedAt: number;
  request: MaintenanceRequest | null;
}

/** The fields a runtime writes; the store stamps the times it does not decide. */
export type RuntimeWrite = Omit<RuntimeRecord, "updatedAt" | "request" | "startedAt"> & {
  /** null: keep the stored value (or, on insert, the store's now). */
  startedAt: number | null;
};
