import { isStartable, type HostCounts, type HostState } from "./wave-state.js";

/**
 * How a wave proceeds, as pure decisions: which hosts form the next batch, which of them may
 * start now (concurrency, per-group limits), and when the wave must stop.
 */

export interface PlannedHost {
  host: string;
  group: string | null;
  ordinal: number;
  state: HostState;
}

/**
 * The next batch: the first `size` hosts in wave order, from index `from` on, that may start
 * (pending, or skipped by an earlier pass) and were not already tried in this pass (a host
 * skipped because it is busy is not retried until the next `wave run`). `next` is where the
 * following batch's search starts: everything before it was planned or could not start.
 */
export function planBatch<T extends PlannedHost>(
  hosts: readonly T[],
  size: number,
  tried: ReadonlySet<string>,
  from = 0,
): { batch: T[]; next: number } {
  const batch: T[] = [];
  let i = from;
  for (; i < hosts.length && batch.length < size; i++) {
    const h = hosts[i]!;
    if (isStartable(h.state) && !tried.has(h.host)) batch.push(h);
  }
  return { batch, next: i };
}

export interface StartLimits {
  concurrency: number;
  /** At most this many hosts of one group in maintenance at once; null: no limit. */
  maxPerGroup: number | null;
}

/**
 * Which host of `queue` (the batch's hosts not started yet, in order) to start next: the first
 * whose group has room. -1 when none may start now (all slots busy, or every queued host's
 * group is at its limit: wait for a running host to finish). Hosts without a group are never
 * held back by the group limit.
 */
export function nextToStart(
  queue: readonly Pick<PlannedHost, "group">[],
  running: readonly Pick<PlannedHost, "group">[],
  limits: StartLimits,
): number {
  if (running.length >= limits.concurrency) return -1;
  const max = limits.maxPerGroup;
  if (max === null) return queue.length > 0 ? 0 : -1;
  const busy = new Map<string, number>();
  for (const r of running) if (r.group !== null) busy.set(r.group, (busy.get(r.group) ?? 0) + 1);
  return queue.findIndex((h) => h.group === null || (busy.get(h.group) ?? 0) < max);
}

export interface StopFacts {
  counts: HostCounts;
  maxFailures: number;
  /** A host's health gate failed in this pass (host and why). */
  healthFailure: { host: string; why: string } | null;
  /** Hosts that need a human. */
  needsReview: readonly string[];
}

/**
 * Why the wave must stop before starting another host, or null to go on. The failure budget
 * counts failed hosts over the whole wave; the wave stops once more than `maxFailures` failed.
 */
export function haltReason(f: StopFacts): string | null {
  if (f.needsReview.length > 0) {
    const list = f.needsReview.slice(0, 5).join(", ");
    const more = f.needsReview.length > 5 ? ` and ${f.needsReview.length - 5} more` : "";
    return `${f.needsReview.length === 1 ? "host" : "hosts"} ${list}${more} need${f.needsReview.length === 1 ? "s" : ""} review: whether the patch landed is unknown`;
  }
  if (f.counts.failed > f.maxFailures)
    return `failure budget spent: ${f.counts.failed} host(s) failed, the wave allows ${f.maxFailures}`;
  if (f.healthFailure)
    return `health gate failed on ${f.healthFailure.host}: ${f.healthFailure.why}; no further batch started`;
  return null;
}

/** The end of a pass with nothing left to start: completed, or stopped with what remains. */
export function passOutcome(c: HostCounts): { completed: boolean; summary: string } {
  const left = c.pending + c.running + c.unfinished + c.needs_review + c.skipped;
  const done = `${c.succeeded} succeeded, ${c.failed} failed`;
  if (left === 0) return { completed: true, summary: done };
  const parts: string[] = [];
  if (c.skipped > 0) parts.push(`${c.skipped} skipped (busy)`);
  if (c.unfinished > 0) parts.push(`${c.unfinished} unfinished`);
  if (c.needs_review > 0) parts.push(`${c.needs_review} need review`);
  if (c.pending > 0) parts.push(`${c.pending} pending`);
  if (c.running > 0) parts.push(`${c.running} running`);
  return {
    completed: false,
    summary: `${done}; ${parts.join(", ")}: run the wave again to continue`,
  };
}

/** Hosts still to do (for progress and the ETA): everything not succeeded or failed. */
export function remainingHosts(c: HostCounts): number {
  return c.pending + c.running + c.unfinished + c.needs_review + c.skipped;
}
