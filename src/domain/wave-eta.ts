import { formatDuration } from "./duration.js";
import { finishWithin, type WaveWindow } from "./wave-window.js";

export interface EtaInput {
  /** Store clock, epoch ms. */
  now: number;
  /** Hosts still to do. */
  remaining: number;
  /** How long finished hosts took (started -> finished), ms; the mean is used. */
  hostDurationsMs: readonly number[];
  /** Hosts worked on at once: min(concurrency, batch), at least 1. */
  parallel: number;
  window: WaveWindow | null;
  /** The zone offset in minutes (Date#getTimezoneOffset) for a local-time window; 0 for UTC. */
  offsetMin: number;
}

export interface Eta {
  /** When the wave should be done, store clock epoch ms. */
  at: number;
  inMs: number;
  /** How it was estimated, in a few words. */
  basis: string;
}

/**
 * The ETA: the hosts still to do, in rounds of `parallel`, at the mean duration of the hosts
 * finished so far, counting only time the window is open. null until one host has finished
 * (nothing to go on) and when the window never opens.
 */
export function estimateEta(i: EtaInput): Eta | null {
  if (i.remaining === 0) return { at: i.now, inMs: 0, basis: "nothing left" };
  const n = i.hostDurationsMs.length;
  if (n === 0) return null;
  const mean = i.hostDurationsMs.reduce((a, b) => a + b, 0) / n;
  const rounds = Math.ceil(i.remaining / Math.max(1, i.parallel));
  const workMs = Math.round(rounds * mean);
  const shift = i.window && !i.window.utc ? i.offsetMin * 60_000 : 0;
  const end = finishWithin(i.window, i.now - shift, workMs);
  if (end === null) return null;
  const at = end + shift;
  return {
    at,
    inMs: at - i.now,
    basis: `${i.remaining} host(s) in rounds of ${Math.max(1, i.parallel)} at the mean of ${n} finished (${formatDuration(mean)} each)${i.window ? ", only while the window is open" : ""}`,
  };
}
