import { EffectState } from "../../domain/effect-state.js";
import { EventKind, type EventRecord } from "../../domain/event.js";
import { effectProblem, RunState } from "../../domain/journal-record.js";
import { isExpired, type LeaseRecord } from "../../domain/lease.js";
import { WaveState } from "../../domain/wave-state.js";
import { leaseJson, type LeaseJson } from "../../lease/lease-json.js";
import { runCheck, type CheckReport } from "../../ops/check.js";
import { runtimeStatus } from "../../runtime/maintenance.js";
import type { Store } from "../../store/store.js";
import { listWaves, waveStatus, type WaveStatus } from "../../wave/wave-status.js";

/** What one screen can show; the API has the rest. */
const MAX_LEASES = 300;
const MAX_WAVES = 12;
const MAX_REVIEW = 50;
const MAX_RUNTIMES = 50;
const MAX_INCIDENTS = 15;
/** The order localeCompare gives (ECMA-402 defines it as this collator's), built once. */
const byScope = new Intl.Collator();

export interface ReviewItem {
  runId: string;
  runtimeId: string;
  scope: string;
  reason: string | null;
  updatedAt: number;
  /** The wave host this run patched, when it is a wave's run. */
  waveHost: { wave: string; host: string } | null;
  /** The effects a human must classify, with what the record knows about each. */
  effects: {
    key: string;
    state: string;
    requestId: string | null;
    attempt: number;
    reason: string | null;
    problem: string | null;
  }[];
}

export interface DashboardSnapshot {
  now: number;
  backend: string;
  location: string;
  check: CheckReport;
  leases: { shown: LeaseJson[]; total: number };
  waves: { shown: WaveStatus[]; total: number };
  review: { items: ReviewItem[]; total: number };
  runtimes: Awaited<ReturnType<typeof runtimeStatus>>[];
  incidents: EventRecord[];
}

/**
 * Everything the dashboard shows, read once (per page view, or once per tick for all live
 * clients): the leases (expired ones first), the check verdict on the same read, the waves
 * (running ones first), the review queue with the evidence, the runtimes and the recent
 * takeovers, refusals and breaks.
 */
export async function gatherSnapshot(
  store: Store,
  o: {
    maxHoldMs: number | null;
    /** How the leases are read (the server's LeaseMirror); default store.leases.listLeases. */
    readLeases?: () => Promise<{ leases: LeaseRecord[]; now: number }>;
  },
): Promise<DashboardSnapshot> {
  const read = await (o.readLeases ?? (() => store.leases.listLeases()))();
  const check = await runCheck(store, {
    maxHoldMs: o.maxHoldMs,
    windowMs: 86_400_000,
    leases: read,
  });
  const now = read.now;
  // Sorted as records and formatted only for the screen: with 10,000 leases, formatting all
  // and comparing with localeCompare (a collator built per call) was most of a snapshot.
  const leases = [...read.leases].sort(
    (a, b) =>
      Number(isExpired(b, now)) - Number(isExpired(a, now)) || byScope.compare(a.scope, b.scope),
  );

  const list = await listWaves(store);
  const order = (s: string) => (s === WaveState.RUNNING ? 0 : s === WaveState.HALTED ? 1 : 2);
  const picked = [...list.waves]
    .sort(
      (a, b) =>
        order(a.state) - order(b.state) || (b.createdAt ?? "").localeCompare(a.createdAt ?? ""),
    )
    .slice(0, MAX_WAVES);
  const waves = await Promise.all(picked.map((w) => waveStatus(store, w.name)));

  const byRun = new Map<string, { wave: string; host: string }>();
  for (const w of waves)
    for (const r of w.review) byRun.set(r.runId, { wave: w.wave.name, host: r.host });
  const reviewRuns = await store.journal.listRuns({
    state: RunState.NEEDS_REVIEW,
    limit: MAX_REVIEW + 1,
  });
  const items = await Promise.all(
    reviewRuns.runs.slice(0, MAX_REVIEW).map(async (run): Promise<ReviewItem> => {
      const snap = await store.journal.getRun(run.runId);
      const effects = (snap?.effects ?? [])
        .map((e) => ({ e, problem: effectProblem(e, snap!.run.seq) }))
        .filter(({ e, problem }) => e.state === EffectState.NEEDS_REVIEW || problem !== null)
        .map(({ e, problem }) => ({
          key: e.key,
          state: e.state,
          requestId: e.requestId,
          attempt: e.attempt,
          reason: e.reviewReason,
          problem,
        }));
      return {
        runId: run.runId,
        runtimeId: run.runtimeId,
        scope: run.scope,
        reason: run.reviewReason,
        updatedAt: run.updatedAt,
        waveHost: byRun.get(run.runId) ?? null,
        effects,
      };
    }),
  );

  const { runtimes: records } = await store.journal.listRuntimes();
  const runtimes = await Promise.all(
    records.slice(0, MAX_RUNTIMES).map((r) => runtimeStatus(store, r)),
  );
  const incidents = await store.events.list({
    kinds: [EventKind.LeaseTakenOver, EventKind.LeaseTakeoverRefused, EventKind.LeaseBroken],
    limit: MAX_INCIDENTS,
  });
  return {
    now,
    backend: store.backend,
    location: store.location,
    check,
    leases: {
      shown: leases.slice(0, MAX_LEASES).map((l) => leaseJson(l, now)),
      total: leases.length,
    },
    waves: { shown: waves, total: list.waves.length },
    review: {
      items,
      total: reviewRuns.runs.length > MAX_REVIEW ? MAX_REVIEW + 1 : reviewRuns.runs.length,
    },
    runtimes,
    incidents: incidents.reverse(),
  };
}
