import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { invalidInput } from "../../domain/errors.js";
import { EventKind } from "../../domain/event.js";
import { runtimeScope } from "../../domain/journal-names.js";
import type { StartupReport } from "../../runtime/startup.js";
import { openStore, resolveStore } from "../../store/open-store.js";
import type { Store } from "../../store/store.js";
import { AgentProcess, DRILL_AGENTS, type DrillAgentName } from "./agent-process.js";
import { agentPrerequisites } from "./agent-prerequisites.js";
import { DemoProvider, type ProviderMode } from "./demo-provider.js";
import { judge, observe } from "./evaluate.js";
import { jobKey, jobRunId } from "./jobs.js";
import { DRILL_POINTS, POINT_SPECS, type DrillCtx, type DrillPoint } from "./scenarios.js";

export interface DrillOptions {
  /** The store to drill (`--store`), else QUIESCE_STORE, else the default file. */
  store?: string;
  provider?: ProviderMode | "both";
  /** Who makes the side effects: the demo agent (default) or a framework agent. */
  agent?: DrillAgentName;
  points?: readonly DrillPoint[];
  /** Rows run at once (each in its own runtime). Default 3. */
  parallel?: number;
  /** Keep the drill's runtimes, runs and effects in the store (default: deleted at the end). */
  keep?: boolean;
  /**
   * The agents' lease TTL: a restart waits about this long for the dead one's lease. Default
   * 1s; 3s for the browser agent, whose chromium competes with its heartbeat on a busy machine
   * (three rows at once on 2 slow cores starved a 2s lease: the agent fenced itself, exit 76,
   * before the row could kill it at its point).
   */
  ttl?: string;
  /** Longest wait for any one step. Default 30s. */
  stepTimeoutMs?: number;
  onRow?: (row: DrillRow) => void;
}

export interface DrillRow {
  point: DrillPoint;
  agent: DrillAgentName;
  where: string;
  provider: ProviderMode;
  /** The classification the point must produce (what recovery does with the effect). */
  expected: string;
  /** The classification the evidence shows. */
  observed: string;
  /** Why that is expected, and everything that was observed, in sentences. */
  expectedDetail: string;
  observedDetail: string;
  /** The run's and its effect's final states: `completed, OBSERVED` or `needs_review, NEEDS_REVIEW`. */
  final: string;
  runId: string;
  /** Checkpoint sequence of the run at the kill, and at the end. */
  seqAtKill: number | null;
  seq: number | null;
  requestId: string | null;
  /** The provider's request id for the key (also when the journal never learned it). */
  providerRequestId: string | null;
  /** How many times the provider executed each key (the at-most-once evidence). */
  deliveries: Record<string, number>;
  pass: boolean;
  failures: string[];
}

export interface DrillReport {
  agent: DrillAgentName;
  store: string;
  backend: "sqlite" | "postgres";
  rows: DrillRow[];
  pass: boolean;
  durationMs: number;
}

/**
 * `quiesce drill`: for each point, a demo agent (a real child process) runs a job against a
 * loopback provider and SIGKILLs itself at the point (QUIESCE_CRASH_AT); a second process
 * restarts, recovers and finishes; the store and the provider say what happened.
 */
export async function runDrill(o: DrillOptions = {}): Promise<DrillReport> {
  const points = o.points ?? DRILL_POINTS;
  for (const p of points)
    if (!(DRILL_POINTS as readonly string[]).includes(p))
      throw invalidInput(`--point: "${p}" is not a drill point (${DRILL_POINTS.join(", ")})`);
  const agent = o.agent ?? "demo";
  if (!Object.hasOwn(DRILL_AGENTS, agent))
    throw invalidInput(
      `--agent: "${String(agent)}" is not a drill agent (${Object.keys(DRILL_AGENTS).join(", ")})`,
    );
  agentPrerequisites(agent);
  const modes: ProviderMode[] = o.provider === "both" ? ["full", "none"] : [o.provider ?? "full"];
  const target = resolveStore(o.store);
  const storeSpec = target.backend === "postgres" ? target.url : target.path;
  const store = await openStore(o.store);
  const started = Date.now();
  const stamp = `${started.toString(36)}${randomBytes(2).toString("hex")}`;
  const tasks = modes.flatMap((mode) => points.map((point) => ({ mode, point })));
  const rows: DrillRow[] = new Array<DrillRow>(tasks.length);
  try {
    let next = 0;
    const worker = async () => {
      while (next < tasks.length) {
        const i = next++;
        const t = tasks[i]!;
        const runtimeId = `drill-${stamp}-${i + 1}`;
        rows[i] = await drillPoint(store, storeSpec, runtimeId, t.point, t.mode, agent, o);
        o.onRow?.(rows[i]);
        if (!o.keep) await store.journal.purgeRuntime(runtimeId).catch(() => undefined);
      }
    };
    await Promise.all(
      Array.from({ length: Math.max(1, Math.min(o.parallel ?? 3, tasks.length)) }, worker),
    );
  } finally {
    await store.close();
  }
  return {
    agent,
    store: store.location,
    backend: store.backend,
    rows,
    pass: rows.every((r) => r.pass),
    durationMs: Date.now() - started,
  };
}

async function drillPoint(
  store: Store,
  storeSpec: string,
  runtimeId: string,
  point: DrillPoint,
  mode: ProviderMode,
  agent: DrillAgentName,
  o: DrillOptions,
): Promise<DrillRow> {
  const spec = POINT_SPECS[point];
  const provider = await new DemoProvider(mode).start();
  const stepMs = o.stepTimeoutMs ?? 30_000;
  const ctx: DrillCtx = {
    runtimeId,
    mode,
    provider,
    store,
    waitFor: (what, check) => waitFor(what, check, stepMs),
    async requestMaintenance(id, drainTimeoutMs) {
      const r = await store.journal.requestMaintenance({
        runtimeId,
        maintenanceId: id,
        drainTimeoutMs,
        by: "quiesce drill",
      });
      if (!r.ok) throw new Error(`maintenance ${id} was refused (${r.reason})`);
    },
  };
  const ttl = o.ttl ?? (agent === "browser" ? "3s" : "1s");
  const args = ["--runtime", runtimeId, "--provider", provider.url, "--ttl", ttl];
  const agents: AgentProcess[] = [];
  // What an agent leaves on disk (a browser profile) dies with the row, SIGKILL or not.
  const tmp = mkdtempSync(join(tmpdir(), "quiesce-drill-"));
  const start = (crashAt: string | null) => {
    const env = { QUIESCE_STORE: storeSpec, QUIESCE_DRILL_TMP: tmp };
    const a = new AgentProcess(args, crashAt, env, agent);
    agents.push(a);
    return a;
  };
  const failures: string[] = [];
  const notes: string[] = [];
  try {
    const first = start(point);
    await Promise.race([spec.beforeCrash(ctx), first.exited]).catch((e: Error) =>
      failures.push(e.message),
    );
    const killed = await first.exit(stepMs);
    const crash = await observe(ctx, spec.job);
    if (point === "runtime.drain") await drainEvidence(ctx, notes, failures);
    const second = start(null);
    const started = await second.line("started", stepMs);
    const report = (started?.report as StartupReport | undefined) ?? null;
    if (!report)
      failures.push(`the restarted process did not start: ${second.stderr.trim() || "no output"}`);
    else notes.push(report.found);
    await spec.afterRestart(ctx).catch((e: Error) => failures.push(e.message));
    await ctx
      .requestMaintenance(`mw-${runtimeId}-end`, 10_000)
      .catch((e: Error) => failures.push(e.message));
    const restart = await second.exit(stepMs);
    if (restart.code !== 0) notes.push(`restarted process: ${lastWords(second)}`);
    const final = await observe(ctx, spec.job);
    const verdict = judge({
      spec,
      mode,
      killed,
      crash,
      report,
      restart,
      final,
      provider,
      notes,
      failures,
    });
    const deliveries = Object.fromEntries(provider.executions);
    const exec = provider.executed(jobKey(spec.job));
    return {
      point,
      agent,
      where: spec.where,
      provider: mode,
      expected: spec.expected(mode).classification,
      observed: verdict.classification,
      expectedDetail: spec.expected(mode).text,
      observedDetail:
        `killed at ${crash.effect?.state ?? crash.runtimeState ?? "?"} (seq ${crash.runSeq ?? "-"}); ` +
        `${verdict.classification}; delivered ${exec}x` +
        (notes.length > 0 ? `; ${notes.join("; ")}` : ""),
      final: `${final.runState ?? "-"}, ${final.effect?.state ?? "-"}`,
      runId: jobRunId(runtimeId, spec.job),
      seqAtKill: crash.runSeq,
      seq: final.runSeq,
      requestId: final.effect?.requestId ?? null,
      providerRequestId: provider.requestIdOf(jobKey(spec.job)),
      deliveries,
      pass: verdict.pass,
      failures: verdict.failures,
    };
  } finally {
    for (const a of agents) a.kill();
    await Promise.all(agents.map((a) => a.exited));
    await provider.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** During the drain: job 3 was refused while DRAINING, and no run was created for it. */
async function drainEvidence(ctx: DrillCtx, notes: string[], failures: string[]): Promise<void> {
  const events = await ctx.store.events.list({ scope: runtimeScope(ctx.runtimeId) });
  const refused = events.some(
    (e) => e.kind === EventKind.RuntimeWorkRefused && e.runId === jobRunId(ctx.runtimeId, "3"),
  );
  if (refused) notes.push("job 3 refused while DRAINING");
  else failures.push("no refusal of job 3 was recorded during the drain");
  if (await ctx.store.journal.getRun(jobRunId(ctx.runtimeId, "3")))
    failures.push("a run for job 3 was created during the drain");
}

async function waitFor<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** What an agent said last before an unexpected exit: its error line, else its stderr's tail. */
function lastWords(a: AgentProcess): string {
  const err = a.lines.findLast((l) => l.type === "error" || l.type === "resume_failed");
  if (err) return String(err.message);
  return a.stderr.trim().split("\n").slice(-3).join(" / ") || "no output";
}
