import { Leases } from "../lease/leases.js";
import { openStore } from "../store/open-store.js";
import type { Runtime } from "./runtime.js";
import { startRuntime, type RuntimeOptions } from "./startup.js";

/**
 * Opens the store (`store` URL/path, else QUIESCE_STORE, else the default file) and starts a
 * runtime on it. The store is closed when the runtime's life ends.
 *
 *     const rt = await openRuntime({ id: "agent-1", providers: [payments], signals: true });
 *     const run = await rt.startRun();
 *     const receipt = await run.effect({ key: "invoice:8472:send", provider: "payments", request });
 *     await run.complete();
 *     await rt.done;   // after `quiesce maintenance start agent-1 --id mw-1` or SIGTERM
 */
export async function openRuntime(o: RuntimeOptions & { store?: string }): Promise<Runtime> {
  const leases = new Leases(await openStore(o.store));
  try {
    const rt = await startRuntime(leases, o);
    void rt.done.finally(() => leases.close().catch(() => undefined));
    return rt;
  } catch (e) {
    await leases.close().catch(() => undefined);
    throw e;
  }
}
