/**
 * `quiesce drill --agent ai-sdk`: an AI SDK generateText loop whose scripted model (the SDK's
 * mock from `ai/test`) calls a journaled `sendInvoice` tool; the tool sends the invoice to the
 * drill's provider on 127.0.0.1 with the idempotency key it is handed. A resumed run replays
 * the whole loop: the journal answers the tool call from its record.
 */
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";
import {
  idempotencyKeyOf,
  journaledTools,
  providersOf,
  stopOnJournalError,
  throwJournalError,
  withRun,
} from "../../../agents/ai.js";
import { runDrillAgent } from "../agent-loop.js";
import { demoCapabilities, lookupEffect, postEffect } from "../demo-client.js";
import { jobKey } from "../jobs.js";
import { scriptedModel } from "./scripted-model.js";

runDrillAgent(async (providerUrl) => {
  const caps = await demoCapabilities(providerUrl);
  const tools = journaledTools(
    {
      sendInvoice: tool({
        description: "Send the invoice of a job to the billing provider",
        inputSchema: z.object({ job: z.string(), amount: z.number() }),
        execute: (input, options) =>
          postEffect(providerUrl, idempotencyKeyOf(options), input, options.abortSignal!),
      }),
    },
    {
      sendInvoice: {
        key: (input) => jobKey(input.job),
        idempotent: caps.idempotencyKey,
        ...(caps.statusLookup ? { lookup: (key: string) => lookupEffect(providerUrl, key) } : {}),
        requestId: (out) => out.requestId,
      },
    },
  );
  return {
    providers: providersOf(tools),
    async perform(run, job) {
      const result = await withRun(run, () =>
        generateText({
          model: scriptedModel([{ tool: "sendInvoice", input: { job, amount: 5 } }]),
          tools,
          prompt: `Invoice job ${job}.`,
          stopWhen: [stepCountIs(4), stopOnJournalError],
        }),
      );
      throwJournalError(result);
      return result.steps[0]?.toolResults[0]?.output ?? null;
    },
  };
});
