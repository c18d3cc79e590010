import { AgentProcess } from "../../src/ops/drill/agent-process.js";
import { DemoProvider, type ProviderMode } from "../../src/ops/drill/demo-provider.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { waitFor } from "../support/cli.js";

/** The drill's demo agent as a real process on `url`, against `provider`. */
export function startAgent(
  url: string,
  runtimeId: string,
  provider: DemoProvider,
  crashAt: string | null = null,
  ttl = "1s",
): AgentProcess {
  return new AgentProcess(
    ["--runtime", runtimeId, "--provider", provider.url, "--ttl", ttl],
    crashAt,
    {
      QUIESCE_STORE: url,
    },
  );
}

/** A provider on loopback, a store connection for looking, and one cleanup for both. */
export async function withRig(
  url: string,
  mode: ProviderMode,
  fn: (rig: { provider: DemoProvider; store: Store; agents: AgentProcess[] }) => Promise<void>,
): Promise<void> {
  const provider = await new DemoProvider(mode).start();
  const store = await openStore(url);
  const agents: AgentProcess[] = [];
  try {
    await fn({ provider, store, agents });
  } finally {
    for (const a of agents) a.kill();
    await provider.close();
    await store.close();
  }
}

export const runState = async (store: Store, runId: string) =>
  (await store.journal.getRun(runId))?.run.state ?? null;

export const waitRunState = (store: Store, runId: string, state: string) =>
  waitFor(
    `run ${runId} to be ${state}`,
    async () => (await runState(store, runId)) === state,
    20_000,
  );

export const waitRuntimeState = (store: Store, runtimeId: string, state: string) =>
  waitFor(
    `runtime ${runtimeId} to be ${state}`,
    async () => (await store.journal.getRuntime(runtimeId)).runtime?.state === state,
    20_000,
  );
