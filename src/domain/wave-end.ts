import { passOutcome } from "./wave-plan.js";
import { WaveState, type HostCounts } from "./wave-state.js";

/** What an agent knows when it stops working on a wave (every host in flight has ended). */
export interface EndFacts {
  counts: HostCounts;
  /** An error stopped it (store unreachable, a bug). */
  error: string | null;
  /** Why it halted (budget spent, health gate failed, hosts in review). */
  halted: string | null;
  /** A stop came (`wave stop`, a signal, the drain deadline): why, and the signal's number. */
  stop: { reason: string; signal: number | null } | null;
  /** Hosts an earlier agent left whose lease stayed busy. */
  blocked: readonly string[];
}

export interface WaveEnd {
  state: typeof WaveState.COMPLETED | typeof WaveState.STOPPED | typeof WaveState.HALTED;
  reason: string;
  /**
   * 0: completed without a failure, or stopped as asked (`wave stop`); 1: completed with
   * failures, halted, or an error; 75: hosts were busy (run again later); 128+n: a signal.
   */
  exitCode: number;
}

/**
 * How a wave ends for this agent, in order of precedence: an error, a halt (a human must look),
 * completion (nothing left, even if a stop came at the same time), a stop, busy hosts.
 */
export function waveEnd(f: EndFacts): WaveEnd {
  const pass = passOutcome(f.counts);
  if (f.error !== null)
    return { state: WaveState.STOPPED, reason: `stopped by an error: ${f.error}`, exitCode: 1 };
  if (f.halted !== null) return { state: WaveState.HALTED, reason: f.halted, exitCode: 1 };
  if (pass.completed)
    return {
      state: WaveState.COMPLETED,
      reason: pass.summary,
      exitCode: f.counts.failed > 0 ? 1 : 0,
    };
  if (f.stop !== null)
    return {
      state: WaveState.STOPPED,
      reason: `${f.stop.reason}; ${pass.summary}`,
      exitCode: f.stop.signal === null ? 0 : 128 + f.stop.signal,
    };
  if (f.blocked.length > 0)
    return {
      state: WaveState.STOPPED,
      reason: `host(s) ${f.blocked.join(", ")} left mid-way by an earlier agent are still busy; ${pass.summary}`,
      exitCode: 75,
    };
  return { state: WaveState.STOPPED, reason: pass.summary, exitCode: 75 };
}
