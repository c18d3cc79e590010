/**
 * The drill's demo agent: a child process running a maintenance-window runtime against the
 * demo provider. Each job is one run with one side effect (`job:N:charge`). It prints one JSON
 * object per line on stdout (started, refused, completed, stopped, done) for the drill.
 *
 *   QUIESCE_STORE=URL node demo-agent.js --runtime ID --provider URL [--ttl 1s]
 *
 * QUIESCE_CRASH_AT=POINT makes it SIGKILL itself at that point; that is the drill.
 */
import { isQuiesceError } from "../../domain/errors.js";
import type { Run } from "../../journal/run.js";
import { sleep } from "../../process/clock.js";
import { openRuntime } from "../../runtime/open-runtime.js";
import { demoProviderClient, fetchJobs } from "./demo-client.js";
import { jobKey, jobRunId } from "./jobs.js";

function emit(o: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(o) + "\n");
}

function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i === -1 ? fallback : process.argv[i + 1];
  if (v === undefined) throw new Error(`demo agent: --${name} is required`);
  return v;
}

async function work(run: Run): Promise<void> {
  const { job } = run.checkpointData<{ job: string }>()!;
  const key = jobKey(job);
  try {
    const result = run.effects.some((e) => e.key === key)
      ? await run.outcome(key)
      : await run.effect({
          key,
          provider: "demo",
          request: { job, amount: 5 },
          context: { step: "charge", job },
        });
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

async function main(): Promise<void> {
  const store = arg("store", process.env.QUIESCE_STORE ?? "");
  const id = arg("runtime");
  const providerUrl = arg("provider");
  const rt = await openRuntime({
    ...(store ? { store } : {}),
    id,
    providers: [await demoProviderClient(providerUrl)],
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
    if (resumed) working.push(work(resumed));
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
      else working.push(work(r.run));
    }
    await sleep(25);
  }
  const outcome = await rt.done;
  await Promise.allSettled(working);
  emit({ type: "done", outcome });
  await rt.lease.eventsWritten(); // the record of a lost lease must not die with the process
  process.exit(outcome.state === "STOPPED" ? 0 : outcome.leaseLost ? 76 : 3);
}

main().catch((e: unknown) => {
  emit({ type: "error", code: isQuiesceError(e) ? e.code : null, message: (e as Error).message });
  process.exit(1);
});
