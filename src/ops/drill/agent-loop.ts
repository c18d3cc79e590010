/**
 * The drill agents' shared life: a maintenance-window runtime that resumes what a previous
 * process left, takes jobs from the provider's queue (a draining runtime refuses them), does
 * each job's one side effect in its own run, and prints one JSON object per line on stdout
 * (started, refused, completed, stopped, done) for the drill. Only `perform` differs between
 * the demo agent and the framework agents (AI SDK, MCP, browser).
 */
import { isQuiesceError } from "../../domain/errors.js";
import type { Provider } from "../../journal/provider.js";
import type { Run } from "../../journal/run.js";
import { sleep } from "../../process/clock.js";
import { openRuntime } from "../../runtime/open-runtime.js";
import { fetchJobs } from "./demo-client.js";
import { jobRunId } from "./jobs.js";

export interface DrillAgent {
  /** The providers its side effects go through (registered before recovery runs). */
  providers: Provider[];
  /** Does job's side effect in `run` (a resumed run does it again: the journal answers). */
  perform(run: Run, job: string): Promise<unknown>;
  /** Frees what it holds (a browser, an MCP server) before the process exits. */
  close?(): Promise<void>;
}

export function emit(o: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(o) + "\n");
}

export function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i === -1 ? fallback : process.argv[i + 1];
  if (v === undefined) throw new Error(`drill agent: --${name} is required`);
  return v;
}

async function work(agent: DrillAgent, run: Run): Promise<void> {
  const { job } = run.checkpointData<{ job: string }>()!;
  try {
    const result = await agent.perform(run, job);
    await run.complete({ job, result });
    emit({ type: "completed", job, runId: run.id });
  } catch (e) {
    emit({
      type: "stopped",
      job,
      runId: run.id,
      code: isQuiesceError(e) ? e.code : null,
      message: (e as Error).message,
    });
  }
}

/** The agent process's main: `--runtime ID --provider URL [--ttl 1s]`, QUIESCE_STORE. */
export function runDrillAgent(setup: (providerUrl: string) => Promise<DrillAgent>): void {
  main(setup).catch((e: unknown) => {
    emit({ type: "error", code: isQuiesceError(e) ? e.code : null, message: (e as Error).message });
    process.exit(1);
  });
}

async function main(setup: (providerUrl: string) => Promise<DrillAgent>): Promise<void> {
  const store = arg("store", process.env.QUIESCE_STORE ?? "");
  const id = arg("runtime");
  const providerUrl = arg("provider");
  const agent = await setup(providerUrl);
  const rt = await openRuntime({
    ...(store ? { store } : {}),
    id,
    providers: agent.providers,
    ttl: arg("ttl", "1s"),
    wait: "30s",
    pollMs: 50,
    signals: true,
    onMessage: (line) => emit({ type: "message", line }),
  });
  emit({ type: "started", pid: process.pid, token: rt.lease.token, report: rt.startup });
  const working: Promise<void>[] = [];
  for (const r of await rt.resumable()) {
    const resumed = await rt.resume(r.runId).catch((e: Error) => {
      emit({ type: "resume_failed", runId: r.runId, message: e.message });
      return null;
    });
    if (resumed) working.push(work(agent, resumed));
  }
  // The job queue keeps delivering work whatever the runtime's state; a draining runtime
  // refuses it (and the job stays for the next process).
  const seen = new Set<string>();
  let finished = false;
  void rt.done.then(() => (finished = true));
  while (!finished) {
    for (const job of await fetchJobs(providerUrl).catch(() => [] as string[])) {
      if (seen.has(job) || finished) continue;
      seen.add(job);
      const runId = jobRunId(id, job);
      if (await rt.store.journal.getRun(runId)) continue; // a previous process took it
      const r = await rt.tryStartRun({ runId, checkpoint: { job } });
      if (!r.ok) emit({ type: "refused", job, reason: r.reason, message: r.message });
      else working.push(work(agent, r.run));
    }
    await sleep(25);
  }
  const outcome = await rt.done;
  await Promise.allSettled(working);
  await agent.close?.().catch(() => undefined);
  emit({ type: "done", outcome });
  await rt.lease.eventsWritten(); // the record of a lost lease must not die with the process
  process.exit(outcome.state === "STOPPED" ? 0 : outcome.leaseLost ? 76 : 3);
}
