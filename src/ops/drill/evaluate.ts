import { EffectState } from "../../domain/effect-state.js";
import { runProblems, type EffectRecord } from "../../domain/journal-record.js";
import type { RuntimeState } from "../../domain/runtime-state.js";
import type { StartupReport } from "../../runtime/startup.js";
import type { AgentExit } from "./agent-process.js";
import type { DemoProvider, ProviderMode } from "./demo-provider.js";
import { jobKey } from "./jobs.js";
import { run, type DrillCtx, type PointSpec } from "./scenarios.js";

/** What the store and the provider show for the row's job at one moment. */
export interface Observation {
  runtimeState: RuntimeState | null;
  runState: string | null;
  runSeq: number | null;
  effect: EffectRecord | null;
  /** Validation failures of the run's records (checksum, states, partial fields). */
  problems: string[];
  requests: number;
  lookups: number;
}

export async function observe(ctx: DrillCtx, job: string): Promise<Observation> {
  const snap = await run(ctx, job);
  const key = jobKey(job);
  return {
    runtimeState: (await ctx.store.journal.getRuntime(ctx.runtimeId)).runtime?.state ?? null,
    runState: snap?.run.state ?? null,
    runSeq: snap?.run.seq ?? null,
    effect: snap?.effects.find((e) => e.key === key) ?? null,
    problems: snap ? runProblems(snap.run, snap.effects) : [],
    requests: ctx.provider.requested(key),
    lookups: ctx.provider.lookedUp(key),
  };
}

/** What happened to the effect between the kill and the end, as the evidence shows it. */
export function classify(
  crash: Observation,
  final: Observation,
  report: StartupReport | null,
): string {
  const from = crash.effect?.state ?? null;
  const to = final.effect?.state ?? null;
  if (from === null || to === null) return `no effect recorded (at the kill: ${from ?? "none"})`;
  const newRequests = final.requests - crash.requests;
  const edge = `${from} -> ${to}`;
  if (from === EffectState.OBSERVED) {
    const recovered = report?.recovered.some((r) => r.effects.length > 0) ?? false;
    return to === EffectState.OBSERVED && newRequests === 0 && !recovered
      ? "clean restart: nothing to recover, nothing replayed"
      : `completed work touched again: ${edge}, ${newRequests} new request(s)`;
  }
  if (to === EffectState.NEEDS_REVIEW) return `quarantined: ${edge}`;
  if (to !== EffectState.OBSERVED) return `unsettled: ${edge}`;
  if (from === EffectState.PLANNED) return `replayed: ${edge}`;
  if (newRequests > 0) return `re-sent with its key: ${edge}`;
  if (final.lookups > crash.lookups)
    return from === EffectState.DISPATCHED
      ? `reconciled by key lookup: ${edge}`
      : `reconciled by lookup: ${edge}`;
  return `completed from the intact record: ${edge}`;
}

export interface RowFacts {
  spec: PointSpec;
  mode: ProviderMode;
  killed: AgentExit & { timedOut: boolean };
  crash: Observation;
  report: StartupReport | null;
  restart: AgentExit & { timedOut: boolean };
  final: Observation;
  provider: DemoProvider;
  /** Point-specific evidence, e.g. "job 3 refused while DRAINING". */
  notes: string[];
  /** Point-specific failures found while collecting the evidence. */
  failures: string[];
}

/** PASS only if every check holds; each failed check is one sentence in `failures`. */
export function judge(f: RowFacts): { classification: string; pass: boolean; failures: string[] } {
  const failures = [...f.failures];
  if (f.killed.signal !== "SIGKILL")
    failures.push(
      `the first process was not killed at ${f.spec.point} (exit ${f.killed.code ?? f.killed.signal}${f.killed.timedOut ? ", timed out" : ""})`,
    );
  const classification = classify(f.crash, f.final, f.report);
  const want = f.spec.expected(f.mode).classification;
  if (classification !== want) failures.push(`expected "${want}", observed "${classification}"`);
  if (f.spec.point === "journal.checkpoint-write") {
    if (f.crash.effect?.state !== EffectState.ACKNOWLEDGED)
      failures.push(
        `the record at the kill is ${f.crash.effect?.state ?? "missing"}, not the previous (ACKNOWLEDGED) one`,
      );
    if (f.crash.problems.length > 0)
      failures.push(`the record at the kill failed validation: ${f.crash.problems.join("; ")}`);
  }
  const prev = f.report?.previous?.state ?? null;
  if (f.spec.point === "runtime.drain" && prev !== "DRAINING")
    failures.push(`the restart found ${prev ?? "no record"}, not a record left DRAINING`);
  if (f.spec.point === "runtime.after-quiesced") {
    if (f.crash.runtimeState !== "QUIESCED")
      failures.push(
        `the runtime was ${f.crash.runtimeState ?? "missing"} at the kill, not QUIESCED`,
      );
    if ((f.report?.recovered.length ?? 0) > 0)
      failures.push("the restart recovered runs after a clean QUIESCED");
  }
  for (const [key, n] of f.provider.executions)
    if (n > 1) failures.push(`${key} was delivered ${n} times`);
  for (const job of f.spec.exactlyOnce(f.mode))
    if (f.provider.executed(jobKey(job)) !== 1)
      failures.push(`job ${job} was delivered ${f.provider.executed(jobKey(job))} times, not once`);
  if (f.restart.code !== 0)
    failures.push(
      `the restarted process exited ${f.restart.code ?? f.restart.signal}${f.restart.timedOut ? " (timed out)" : ""}`,
    );
  if (f.final.runtimeState !== "STOPPED")
    failures.push(`the runtime ended ${f.final.runtimeState ?? "without a record"}, not STOPPED`);
  return { classification, pass: failures.length === 0, failures };
}
