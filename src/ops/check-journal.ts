import { formatDuration } from "../domain/duration.js";
import { EffectState } from "../domain/effect-state.js";
import { RunState, type RunRecord } from "../domain/journal-record.js";
import { RuntimeState } from "../domain/runtime-state.js";
import type { Store } from "../store/store.js";
import type { CheckCollector, CheckFinding } from "./check.js";

const LIMIT = 10_000;

/**
 * The side-effect journal and the maintenance windows:
 * - a runtime still DRAINING past its deadline is CRITICAL: the process that should have
 *   decided at the deadline is hung or gone, and the window it holds never closes;
 * - a runtime or a run in needs_review, and a suspended run, are WARNINGs: each waits for a
 *   human (`quiesce runs resolve`) or for its runtime to start again.
 */
export const journalCollector: CheckCollector = {
  name: "journal",
  async collect({ store, now }) {
    const findings: CheckFinding[] = [];
    const { runtimes } = await store.journal.listRuntimes();
    let overdue = 0;
    for (const rt of runtimes) {
      if (rt.state === RuntimeState.DRAINING && rt.deadlineAt !== null && rt.deadlineAt < now) {
        overdue++;
        findings.push({
          severity: "critical",
          code: "runtime_stuck_draining",
          subject: rt.runtimeId,
          message: `runtime ${rt.runtimeId} is stuck in DRAINING ${formatDuration(now - rt.deadlineAt)} past its deadline${rt.maintenanceId ? ` (maintenance ${rt.maintenanceId})` : ""}${rt.host ? ` on ${rt.host}${rt.pid === null ? "" : ` pid ${rt.pid}`}` : ""}: its process is hung or gone; see quiesce maintenance status ${rt.runtimeId}`,
        });
      } else if (rt.state === RuntimeState.NEEDS_REVIEW) {
        findings.push({
          severity: "warning",
          code: "runtime_needs_review",
          subject: rt.runtimeId,
          message: `runtime ${rt.runtimeId} is in NEEDS_REVIEW: ${rt.reviewReason ?? "no reason recorded"}; see quiesce runs list --runtime ${rt.runtimeId} --state needs_review`,
        });
      }
    }
    const review = await runsIn(store, RunState.NEEDS_REVIEW);
    for (const run of review) findings.push(await reviewFinding(store, run));
    const suspended = await runsIn(store, RunState.SUSPENDED);
    for (const run of suspended)
      findings.push({
        severity: "warning",
        code: "run_suspended",
        subject: run.runId,
        message: `run ${run.runId} of runtime ${run.runtimeId} is suspended at a checkpoint since ${formatDuration(now - run.updatedAt)} ago: it resumes when ${run.runtimeId} starts again; see quiesce runs show ${run.runId}`,
      });
    return {
      findings,
      metrics: [
        {
          perf: "runtimes_stuck_draining",
          prom: "runtimes_stuck_draining",
          help: "Runtimes still DRAINING past their drain deadline",
          value: overdue,
        },
        {
          perf: "runs_needing_review",
          prom: "runs_needs_review",
          help: "Journal runs in needs_review (an effect nobody can classify)",
          value: review.length,
        },
        {
          perf: "runs_suspended",
          prom: "runs_suspended",
          help: "Journal runs suspended at a checkpoint, waiting for their runtime",
          value: suspended.length,
        },
      ],
    };
  },
};

async function runsIn(store: Store, state: RunState): Promise<RunRecord[]> {
  return (await store.journal.listRuns({ state, limit: LIMIT })).runs;
}

/** Names the run and, per quarantined effect, the `quiesce runs resolve` line to settle it. */
async function reviewFinding(store: Store, run: RunRecord): Promise<CheckFinding> {
  const snap = await store.journal.getRun(run.runId);
  const keys = (snap?.effects ?? [])
    .filter((e) => e.state === EffectState.NEEDS_REVIEW)
    .map((e) => e.key);
  const why = run.reviewReason ?? "no reason recorded";
  const resolve =
    keys.length === 0
      ? `inspect it with quiesce runs show ${run.runId}`
      : keys
          .map(
            (k) =>
              `quiesce runs resolve ${run.runId} --effect ${k} --as observed|not-sent --reason "..."`,
          )
          .join("; ");
  return {
    severity: "warning",
    code: "run_needs_review",
    subject: run.runId,
    message: `run ${run.runId} of runtime ${run.runtimeId} needs review (${why}); resolve: ${resolve}`,
  };
}
