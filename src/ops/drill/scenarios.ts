import type { RunSnapshot } from "../../store/journal-store.js";
import type { Store } from "../../store/store.js";
import type { DemoProvider, ProviderMode } from "./demo-provider.js";
import { jobKey, jobRunId } from "./jobs.js";

/** The six points of the drill, in the order of a job's life (issue #4, item 7). */
export const DRILL_POINTS = [
  "runtime.drain",
  "effect.before-dispatch",
  "effect.after-dispatch",
  "effect.after-ack",
  "journal.checkpoint-write",
  "runtime.after-quiesced",
] as const;
export type DrillPoint = (typeof DRILL_POINTS)[number];

/** What a scenario can do while the demo agent runs. */
export interface DrillCtx {
  runtimeId: string;
  mode: ProviderMode;
  provider: DemoProvider;
  store: Store;
  waitFor<T>(what: string, check: () => Promise<T | null | undefined | false>): Promise<T>;
  requestMaintenance(maintenanceId: string, drainTimeoutMs: number): Promise<void>;
}

export interface PointSpec {
  point: DrillPoint;
  where: string;
  /** The job whose run the row reports. */
  job: string;
  expected(mode: ProviderMode): { classification: string; text: string };
  /** Drives the first process until it dies at the point. */
  beforeCrash(ctx: DrillCtx): Promise<void>;
  /** After the restart: waits until the replacement has settled every job. */
  afterRestart(ctx: DrillCtx): Promise<void>;
  /** Jobs the provider must have executed exactly once at the end (the rest: at most once). */
  exactlyOnce(mode: ProviderMode): string[];
}

export const run = (ctx: DrillCtx, job: string): Promise<RunSnapshot | null> =>
  ctx.store.journal.getRun(jobRunId(ctx.runtimeId, job));

const settled = (s: RunSnapshot | null) =>
  s !== null && (s.run.state === "completed" || s.run.state === "needs_review") ? s : null;

async function complete(ctx: DrillCtx, job: string): Promise<void> {
  ctx.provider.addJob(job);
  await ctx.waitFor(
    `job ${job} to complete`,
    async () => (await run(ctx, job))?.run.state === "completed",
  );
}

const waitSettled = (ctx: DrillCtx, job: string) =>
  ctx.waitFor(`job ${job} to settle after the restart`, async () => settled(await run(ctx, job)));

/** Where the effect was when the process died, and what a restart may do about it. */
function effectPoint(
  point: DrillPoint,
  where: string,
  full: string,
  none: string,
  fullText: string,
  noneText: string,
): PointSpec {
  return {
    point,
    where,
    job: "1",
    expected: (mode) =>
      mode === "full"
        ? { classification: full, text: fullText }
        : { classification: none, text: noneText },
    beforeCrash: (ctx) => Promise.resolve(ctx.provider.addJob("1")),
    afterRestart: async (ctx) => void (await waitSettled(ctx, "1")),
    exactlyOnce: (mode) => (none.startsWith("quarantined") && mode === "none" ? [] : ["1"]),
  };
}

export const POINT_SPECS: Record<DrillPoint, PointSpec> = {
  "runtime.drain": {
    point: "runtime.drain",
    where: "during queue drain",
    job: "2",
    expected: (mode) =>
      mode === "full"
        ? {
            classification: "reconciled by key lookup: DISPATCHED -> OBSERVED",
            text: "job 3 refused while draining; restart recovers the in-flight run first (lookup), then runs job 3",
          }
        : {
            classification: "quarantined: DISPATCHED -> NEEDS_REVIEW",
            text: "job 3 refused while draining; restart quarantines the in-flight run, then runs job 3",
          },
    async beforeCrash(ctx) {
      await complete(ctx, "1");
      ctx.provider.hold(jobKey("2")); // job 2's side effect happens; its acknowledgement waits
      ctx.provider.addJob("2");
      await ctx.waitFor("job 2's request", () =>
        Promise.resolve(ctx.provider.requested(jobKey("2")) > 0),
      );
      await ctx.requestMaintenance(`mw-${ctx.runtimeId}`, 60_000);
      await ctx.waitFor(
        "DRAINING",
        async () =>
          (await ctx.store.journal.getRuntime(ctx.runtimeId)).runtime?.state === "DRAINING",
      );
      ctx.provider.addJob("3"); // new work arriving during the drain
    },
    async afterRestart(ctx) {
      ctx.provider.release(jobKey("2"));
      await waitSettled(ctx, "2");
      await waitSettled(ctx, "3");
    },
    exactlyOnce: (mode) => (mode === "full" ? ["1", "2", "3"] : ["1", "3"]),
  },
  "effect.before-dispatch": effectPoint(
    "effect.before-dispatch",
    "before dispatch",
    "replayed: PLANNED -> OBSERVED",
    "replayed: PLANNED -> OBSERVED",
    "PLANNED, never sent: replayed once",
    "PLANNED, never sent: replayed once",
  ),
  "effect.after-dispatch": effectPoint(
    "effect.after-dispatch",
    "after dispatch, before acknowledgement",
    "reconciled by key lookup: DISPATCHED -> OBSERVED",
    "quarantined: DISPATCHED -> NEEDS_REVIEW",
    "DISPATCHED, fate unknown: reconciled by key lookup, not re-sent",
    "DISPATCHED, fate unknown, no lookup: quarantined, not re-sent",
  ),
  "effect.after-ack": effectPoint(
    "effect.after-ack",
    "after acknowledgement, before the local write",
    "reconciled by key lookup: DISPATCHED -> OBSERVED",
    "quarantined: DISPATCHED -> NEEDS_REVIEW",
    "acknowledgement lost with the process: the lookup restores the result",
    "acknowledgement lost, no lookup: quarantined, not re-sent",
  ),
  "journal.checkpoint-write": effectPoint(
    "journal.checkpoint-write",
    "during the checkpoint write",
    "reconciled by lookup: ACKNOWLEDGED -> OBSERVED",
    "completed from the intact record: ACKNOWLEDGED -> OBSERVED",
    "previous record (ACKNOWLEDGED) intact and valid; advanced from it only, by lookup",
    "previous record (ACKNOWLEDGED) intact and valid; completed from its recorded result",
  ),
  "runtime.after-quiesced": {
    point: "runtime.after-quiesced",
    where: "after QUIESCED, before exit",
    job: "1",
    expected: () => ({
      classification: "clean restart: nothing to recover, nothing replayed",
      text: "restart is clean and replays no completed work",
    }),
    async beforeCrash(ctx) {
      await complete(ctx, "1");
      await ctx.requestMaintenance(`mw-${ctx.runtimeId}`, 60_000);
    },
    afterRestart: () => Promise.resolve(),
    exactlyOnce: () => ["1"],
  },
};
