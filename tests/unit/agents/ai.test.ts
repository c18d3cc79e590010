import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";
import {
  journaledTool,
  journaledTools,
  providersOf,
  stopOnJournalError,
  throwJournalError,
  withRun,
} from "../../../src/agents/ai.js";
import { isQuiesceError } from "../../../src/domain/errors.js";
import { Journal } from "../../../src/journal/journal.js";
import type { Lease } from "../../../src/lease/lease.js";
import { scriptedModel } from "../../../src/ops/drill/agents/scripted-model.js";
import { tempStore } from "../journal/fixtures.js";

function invoiceTool(sent: { key: string; id: string }[], o: { fail?: boolean } = {}) {
  return tool({
    description: "send an invoice",
    inputSchema: z.object({ id: z.string(), amount: z.number() }),
    execute: (input, opts) => {
      const key = (opts as { idempotencyKey?: string }).idempotencyKey ?? "none";
      sent.push({ key, id: input.id });
      if (o.fail) throw new Error("connection reset");
      return Promise.resolve({ sent: input.id, requestId: `inv-${sent.length}` });
    },
  });
}

describe("quiesce/ai: journaled AI SDK tools in a generateText loop", () => {
  let env: ReturnType<typeof tempStore>;
  let lease: Lease;
  beforeEach(async () => {
    env = tempStore();
    lease = await env.leases.acquire("runtime:rt", { ttl: "10s" });
  });
  afterEach(() => env.cleanup());

  test("the call is journaled under the logical key, the key reaches execute, and a replayed loop returns the recorded result without sending again", async () => {
    const sent: { key: string; id: string }[] = [];
    const tools = journaledTools(
      { sendInvoice: invoiceTool(sent) },
      {
        sendInvoice: {
          key: (i) => `invoice:${i.id}:send`,
          requestId: (out) => out.requestId,
        },
      },
    );
    const j = new Journal(env.store, lease, { runtimeId: "rt", providers: providersOf(tools) });
    const run = await j.createRun({ runId: "r1" });
    const loop = () =>
      withRun(run, () =>
        generateText({
          model: scriptedModel([{ tool: "sendInvoice", input: { id: "8472", amount: 5 } }]),
          tools,
          prompt: "bill customer 8472",
          stopWhen: stepCountIs(3),
        }),
      );
    const first = await loop();
    throwJournalError(first);
    const second = await loop(); // the agent's loop again, as after a crash
    throwJournalError(second);
    assert.deepEqual(sent, [{ key: "invoice:8472:send", id: "8472" }], "sent once");
    const out = (r: Awaited<ReturnType<typeof loop>>) =>
      r.steps[0]!.toolResults.map((x) => x.output);
    assert.deepEqual(out(second), out(first));
    const e = (await env.store.journal.getRun("r1"))!.effects[0]!;
    assert.deepEqual(
      [e.key, e.provider, e.state, e.requestId],
      ["invoice:8472:send", "tool:sendInvoice", "OBSERVED", "inv-1"],
    );
    assert.deepEqual(JSON.parse(e.context!), {
      tool: "sendInvoice",
      input: { id: "8472", amount: 5 },
    });
  });

  test("without a key: the tool's name and the input's canonical hash, the same for the same input in another key order", async () => {
    const sent: { key: string; id: string }[] = [];
    const t = journaledTool(invoiceTool(sent), { name: "sendInvoice" });
    const j = new Journal(env.store, lease, { runtimeId: "rt", providers: [t.quiesceProvider] });
    const run = await j.createRun({ runId: "r2" });
    const exec = t.execute as (i: unknown, o: unknown) => Promise<unknown>;
    const opts = { toolCallId: "a", messages: [] };
    await withRun(run, () => exec({ id: "1", amount: 5 }, opts));
    await withRun(run, () => exec({ amount: 5, id: "1" }, { ...opts, toolCallId: "b" }));
    assert.equal(sent.length, 1, "another call id is not another operation");
    assert.match(sent[0]!.key, /^tool:sendInvoice:[0-9a-f]{32}$/);
    await exec({ id: "2", amount: 5 }, { ...opts, run }).catch(() => undefined);
    await j.createRun({ runId: "r3" });
  });

  test("a call whose fate is unknown goes to NEEDS_REVIEW with the tool and input; the loop stops with the journal's error", async () => {
    const sent: { key: string; id: string }[] = [];
    const tools = journaledTools({ sendInvoice: invoiceTool(sent, { fail: true }) });
    const j = new Journal(env.store, lease, { runtimeId: "rt", providers: providersOf(tools) });
    const run = await j.createRun({ runId: "r4" });
    const result = await withRun(run, () =>
      generateText({
        model: scriptedModel([{ tool: "sendInvoice", input: { id: "9", amount: 1 } }]),
        tools,
        prompt: "bill 9",
        stopWhen: [stepCountIs(3), stopOnJournalError],
      }),
    );
    assert.equal(result.steps.length, 1, "no model call after the journal stopped the run");
    assert.throws(
      () => throwJournalError(result),
      (e) => isQuiesceError(e, "NEEDS_REVIEW"),
    );
    const snap = (await env.store.journal.getRun("r4"))!;
    assert.equal(snap.run.state, "needs_review");
    assert.equal(snap.effects[0]!.state, "NEEDS_REVIEW");
    assert.deepEqual(JSON.parse(snap.effects[0]!.context!), {
      tool: "sendInvoice",
      input: { id: "9", amount: 1 },
    });
    assert.equal(sent.length, 1, "never sent again");
  });

  test("bad input: one sentence, nothing journaled", async () => {
    const sent: { key: string; id: string }[] = [];
    assert.throws(
      () => journaledTool({ description: "no execute" } as never, { name: "t" }),
      /^QuiesceError: tool t has no execute function: there is nothing to journal$/,
    );
    const t = journaledTool(invoiceTool(sent), { name: "bad", key: () => 42 as unknown as string });
    const j = new Journal(env.store, lease, { runtimeId: "rt", providers: [] });
    const run = await j.createRun({ runId: "r5" });
    const exec = t.execute as (i: unknown, o: unknown) => Promise<unknown>;
    await assert.rejects(
      withRun(run, () => exec({ id: "1", amount: 1 }, {})),
      /tool bad: the idempotency key must be a string, not number/,
    );
    await assert.rejects(
      exec({ id: "1", amount: 1 }, {}),
      /no run to journal it in; call it inside withRun/,
    );
    const ok = journaledTool(invoiceTool(sent), { name: "ok" });
    await run.complete();
    await assert.rejects(
      withRun(run, () =>
        (ok.execute as (i: unknown, o: unknown) => Promise<unknown>)({ id: "1", amount: 1 }, {}),
      ),
      /run r5 is completed, not active/,
    );
    assert.equal((await env.store.journal.getRun("r5"))!.effects.length, 0);
    assert.equal(sent.length, 0);
  });
});
