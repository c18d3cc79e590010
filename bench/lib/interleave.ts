import { performance } from "node:perf_hooks";
import type { Op } from "./timed-loop.js";

export interface Contestant {
  key: string;
  op: Op;
  /** Runs of `op` per round (a probe fsync is half a two-commit cycle: give it 2). */
  perRound?: number;
}

export interface Tally {
  n: number;
  ms: number;
}

export interface InterleaveResult {
  totals: Map<string, Tally>;
  /** The same tallies per third of the run, to show whether the comparison held throughout. */
  thirds: Map<string, Tally>[];
}

/**
 * Runs every contestant one cycle at a time in rotating order until `ms` has passed, timing
 * each cycle on its own. The disk's fsync rate swings 2-3x within minutes; interleaving at
 * this grain gives every contestant the same disk, which back-to-back runs do not.
 *
 * Between two cycles the event loop gets one turn that is not timed. Contestants share a
 * process, and what one leaves behind for the event loop (V8's garbage-collection tasks run
 * there) would otherwise be paid inside the next cycle that gives the loop a turn: a
 * synchronous contestant (raw SQLite) never does, so the library's journal, which yields every
 * few milliseconds, was charged for both. Measured on bench/journal: ours 0.93x raw with the
 * charge, 0.97x without it; each run alone in its own process, the two cost the same CPU.
 */
export async function interleave(
  contestants: readonly Contestant[],
  ms: number,
): Promise<InterleaveResult> {
  const totals = new Map<string, Tally>(contestants.map((c) => [c.key, { n: 0, ms: 0 }]));
  const thirds = [0, 1, 2].map(
    () => new Map<string, Tally>(contestants.map((c) => [c.key, { n: 0, ms: 0 }])),
  );
  const start = performance.now();
  let round = 0;
  while (performance.now() - start < ms) {
    const third = thirds[Math.min(2, Math.floor(((performance.now() - start) * 3) / ms))]!;
    for (let i = 0; i < contestants.length; i++) {
      const c = contestants[(i + round) % contestants.length]!;
      for (let k = 0; k < (c.perRound ?? 1); k++) {
        const t = performance.now();
        const r = c.op();
        if (r) await r;
        const d = performance.now() - t;
        add(totals.get(c.key)!, d);
        add(third.get(c.key)!, d);
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    round++;
  }
  return { totals, thirds };
}

function add(t: Tally, ms: number): void {
  t.n++;
  t.ms += ms;
}

export function perSec(t: Tally | undefined): number {
  return t && t.ms > 0 ? (t.n * 1000) / t.ms : NaN;
}
