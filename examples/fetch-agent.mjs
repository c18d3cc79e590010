// An HTTP side effect with the Idempotency-Key header, journaled: the second call in the run is
// answered from the record; a timeout or reset would be "unknown", never "not sent".
//   node examples/fetch-agent.mjs
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openRuntime } from "quiesce";
import { fetchProvider, journaledFetch, withRun } from "quiesce/fetch";
import { startBilling } from "./billing-server.mjs";

const billing = await startBilling();
// With a lookup, recovery can ask the provider what became of a key instead of asking a human.
const payments = fetchProvider({
  name: "billing",
  lookup: async (key) => {
    const id = billing.sent.get(key);
    return id
      ? { status: "observed", requestId: id, result: { invoice: id, key } }
      : { status: "absent" };
  },
});
const store = process.env.QUIESCE_STORE ?? join(tmpdir(), "quiesce-examples.db");
const rt = await openRuntime({ store, id: "example-fetch", providers: [payments] });
const run = await rt.startRun();
const send = () =>
  journaledFetch(
    "invoice:8472:send",
    { url: `${billing.url}/invoices`, json: { customer: "acme", amount: 120 } },
    { provider: payments },
  );
const first = await withRun(run, send);
const again = await withRun(run, send);
console.log(first.status, await first.json());
console.log(again.status, await again.json(), "request id:", run.effects[0].requestId);
console.log("requests the provider received:", billing.stats.requests); // 1
await run.complete();
await rt.stop();
billing.close();
