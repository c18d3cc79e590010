/**
 * The drill's demo agent: a child process running a maintenance-window runtime against the
 * demo provider through a hand-written Provider. Each job is one run with one side effect
 * (`job:N:charge`).
 *
 *   QUIESCE_STORE=URL node demo-agent.js --runtime ID --provider URL [--ttl 1s]
 *
 * QUIESCE_CRASH_AT=POINT makes it SIGKILL itself at that point; that is the drill.
 */
import { runDrillAgent } from "./agent-loop.js";
import { demoProviderClient } from "./demo-client.js";
import { jobKey } from "./jobs.js";

runDrillAgent(async (providerUrl) => ({
  providers: [await demoProviderClient(providerUrl)],
  perform: (run, job) => {
    const key = jobKey(job);
    return run.effects.some((e) => e.key === key)
      ? run.outcome(key)
      : run.effect({
          key,
          provider: "demo",
          request: { job, amount: 5 },
          context: { step: "charge", job },
        });
  },
}));
