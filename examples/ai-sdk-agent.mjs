// An AI SDK agent whose tool sends an invoice exactly once, even when its loop runs again.
//   node examples/ai-sdk-agent.mjs      (no API key: the SDK's mock model scripts the tool call)
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { openRuntime } from "quiesce";
import {
  idempotencyKeyOf,
  journaledTools,
  providersOf,
  throwJournalError,
  withRun,
} from "quiesce/ai";
import { startBilling } from "./billing-server.mjs";

const billing = await startBilling();
const tools = journaledTools(
  {
    sendInvoice: tool({
      description: "Send an invoice",
      inputSchema: z.object({ customer: z.string(), amount: z.number() }),
      execute: async (input, options) => {
        const res = await globalThis.fetch(`${billing.url}/invoices`, {
          method: "POST",
          headers: { "idempotency-key": idempotencyKeyOf(options) },
          body: JSON.stringify(input),
        });
        return res.json();
      },
    }),
  },
  {
    sendInvoice: {
      key: (input) => `invoice:${input.customer}:send`,
      requestId: (out) => out.invoice,
    },
  },
);

const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } };
const model = new MockLanguageModelV4({
  doGenerate: async ({ prompt }) =>
    prompt.some((m) => m.role === "tool")
      ? {
          content: [{ type: "text", text: "Invoice sent." }],
          finishReason: { unified: "stop" },
          usage,
          warnings: [],
        }
      : {
          content: [
            {
              type: "tool-call",
              toolCallId: `c${Math.random()}`,
              toolName: "sendInvoice",
              input: '{"customer":"acme","amount":120}',
            },
          ],
          finishReason: { unified: "tool-calls" },
          usage,
          warnings: [],
        },
});

const store = process.env.QUIESCE_STORE ?? join(tmpdir(), "quiesce-examples.db");
const rt = await openRuntime({ store, id: "example-ai", providers: providersOf(tools) });
const run = await rt.startRun();
for (const attempt of [1, 2]) {
  // The second loop is what a framework's retry or a restart does: the journal answers it.
  const result = await withRun(run, () =>
    generateText({ model, tools, prompt: "Bill acme 120", stopWhen: stepCountIs(3) }),
  );
  throwJournalError(result);
  console.log(
    `loop ${attempt}:`,
    JSON.stringify(result.steps[0].toolResults[0].output),
    result.text,
  );
}
await run.complete();
console.log(`requests the provider received: ${billing.stats.requests}`); // 1
await rt.stop();
billing.close();
