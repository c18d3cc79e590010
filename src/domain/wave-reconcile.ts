import { EffectState } from "./effect-state.js";
import { RunState } from "./journal-record.js";

/**
 * What a new agent does with a host an earlier agent left mid-way (running, unfinished, or in
 * review), decided from the host's journal run alone: the journal, not the host row, knows
 * whether the patch was sent. The journal's own recovery (I9) then settles the patch effect:
 * looked up with `--check`, sent again only if `--idempotent`, otherwise quarantined.
 */
export type LeftoverAction =
  /** No run (the agent stopped before journalling anything): start the host from scratch. */
  | { action: "start"; why: string }
  /** An open run: recover it (validate, settle the patch effect), then go on from there. */
  | { action: "resume"; why: string }
  /** The run is quarantined: the host needs review until a human resolves it. */
  | { action: "review"; why: string }
  /** The run completed (patched, health gate passed): only the host row was not written. */
  | { action: "succeeded"; why: string }
  /** The run failed (patch or health gate): only the host row was not written. */
  | { action: "failed"; why: string };

export function leftoverAction(
  run: { state: RunState; reviewReason: string | null } | null,
): LeftoverAction {
  if (run === null) return { action: "start", why: "nothing was journalled: the patch never left" };
  switch (run.state) {
    case RunState.ACTIVE:
    case RunState.SUSPENDED:
      return { action: "resume", why: `its run is ${run.state}: recover it from the journal` };
    case RunState.NEEDS_REVIEW:
      return {
        action: "review",
        why: run.reviewReason ?? "its patch is quarantined until someone resolves it",
      };
    case RunState.COMPLETED:
      return { action: "succeeded", why: "its run completed: patched and healthy" };
    case RunState.FAILED:
      return { action: "failed", why: run.reviewReason ?? "its run failed" };
  }
}

/** What the patch command's recorded result means for the host. */
export interface PatchResult {
  /** null: not from a command of ours (a human resolved it as observed). */
  exitCode: number | null;
  /** How it was learned: the patch command itself, or the `--check` command after a crash. */
  via: "patch" | "check" | "resolved";
  /** The last line the command wrote, for the record. */
  output?: string;
  /** Which dispatch of the patch this was; more than 1 after a lookup said one never landed. */
  attempt?: number;
}

export function patchOutcome(result: unknown): { ok: boolean; why: string } {
  if (result === null || typeof result !== "object")
    return { ok: true, why: "resolved as patched by an operator" };
  const r = result as Partial<PatchResult>;
  if (r.via === "check") return { ok: true, why: "the --check command says it is patched" };
  if (r.exitCode === 0)
    return {
      ok: true,
      why:
        (r.attempt ?? 1) > 1
          ? `the patch command exited 0 (dispatch ${r.attempt}: the --check command said an earlier one had not landed)`
          : "the patch command exited 0",
    };
  if (typeof r.exitCode === "number")
    return {
      ok: false,
      why: `the patch command exited ${r.exitCode}${r.output ? ` (last output: ${r.output})` : ""}`,
    };
  return { ok: true, why: "resolved as patched by an operator" };
}

/** Which step of a host an agent was in when it stopped. */
export type HostPhase = "lease" | "patch" | "health";

/**
 * The sentence recorded on a host a controlled stop leaves `unfinished`: what is known, from
 * where the agent was and the patch effect's journal state.
 */
export function unfinishedReason(
  phase: HostPhase,
  effect: EffectState | null,
  why: string,
): string {
  if (phase === "health")
    return `${why} after the patch succeeded, before the health gate passed; the next run repeats the health gate`;
  switch (effect) {
    case null:
    case EffectState.PLANNED:
      return `${why} before the patch was sent: nothing ran on the host`;
    case EffectState.DISPATCHED:
      return `${why} while the patch command ran: whether it applied is unknown (journal: DISPATCHED); the next run reconciles it (with --check, or again if --idempotent, else review)`;
    case EffectState.ACKNOWLEDGED:
    case EffectState.OBSERVED:
      return `${why} after the patch command ended (journal: ${effect}); the next run finishes it`;
    case EffectState.NEEDS_REVIEW:
      return `${why}; its patch needs review (journal: NEEDS_REVIEW)`;
  }
}
