import type { Refusal } from "./leases.js";

/** How `quiesce run` ended (superviseCommand): the exit code and what it means. */
export type SuperviseResult =
  | { outcome: "not_acquired"; exitCode: 75; refusal: Refusal }
  | { outcome: "interrupted"; exitCode: number; signal: NodeJS.Signals }
  | {
      outcome: "completed";
      exitCode: number;
      runId: string;
      token: number;
      released: boolean;
      /** The lease lapsed after the command had ended (recorded, not a loss). */
      lapsedAfterExit?: boolean;
      /** Processes the command left in its group that were stopped before the release. */
      leftoversStopped?: number;
    }
  | { outcome: "lease_lost"; exitCode: 76; runId: string; token: number; reason: string }
  | {
      outcome: "spawn_failed";
      exitCode: 126 | 127;
      runId: string;
      /** Null when the command could not be spawned before the lease was taken (none was). */
      token: number | null;
      error: string;
    }
  | { outcome: "internal_error"; exitCode: 1; runId: string; token: number; error: string };
