/**
 * quiesce/ai: AI SDK tools whose `execute` runs as a journal effect of the current run.
 *
 *     const sendInvoice = journaledTool(tool({ inputSchema, execute }), {
 *       name: "sendInvoice",
 *       key: (input) => `invoice:${input.id}:send`,
 *     });
 *     const rt = await openRuntime({ id: "billing", providers: providersOf({ sendInvoice }) });
 *     const result = await withRun(run, () => generateText({ model, tools: { sendInvoice }, prompt }));
 *     throwJournalError(result); // the SDK turns a tool's error into a tool result: surface ours
 *
 * Only types come from "ai": this module loads nothing of it at run time.
 */
import type { InferToolInput, InferToolOutput, Tool, ToolExecutionOptions } from "ai";
import { checkKey, derivedKey } from "../domain/canonical-json.js";
import { invalidInput, isQuiesceError, type QuiesceError } from "../domain/errors.js";
import { CallProvider, callOnce } from "../journal/call-effect.js";
import { resolveRun, type RunBinding } from "../journal/current-run.js";
import type { Ack, LookupAnswer, Provider } from "../journal/provider.js";

export { withRun, currentRun } from "../journal/current-run.js";

export interface JournaledToolOptions<INPUT = unknown, OUTPUT = unknown> {
  /** The tool's name (the key of the tools object); the journal's provider is `tool:NAME`. */
  name: string;
  /** The logical operation: `(input) => \`invoice:${input.id}:send\``. Default: the tool's name and a hash of its canonical input. */
  key?: (input: INPUT) => string;
  /** The tool's receiver honours the key (passed as `options.idempotencyKey`): an unacknowledged call may be sent again. */
  idempotent?: boolean;
  /** What became of a key; recovery relies on it ("absent" must mean it never landed). */
  lookup?: (key: string, signal: AbortSignal) => Promise<LookupAnswer>;
  /** The receiver's own id for the call, read from the tool's output (shown in `runs show`). */
  requestId?: (output: OUTPUT) => string | null | undefined;
  /** The run to journal in; default: the current run (withRun). */
  run?: RunBinding;
}

/** What a journaled tool's execute receives besides the SDK's options. */
export type JournaledToolExecutionOptions = ToolExecutionOptions<unknown> & {
  idempotencyKey: string;
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any tool, as the SDK's ToolSet says
type ToolLike = Tool<any, any, any>;

export type JournaledTool<T> = T & { readonly quiesceProvider: Provider };

/**
 * The tool with its `execute` journaled: planned and dispatched durably before it runs, its
 * output recorded; the same call again in the run (a replayed agent loop) returns the recorded
 * output; a call whose fate is unknown goes to review with the tool's name and input.
 */
export function journaledTool<T extends ToolLike>(
  tool: T,
  options: JournaledToolOptions<ToolInput<T>, ToolOutput<T>>,
): JournaledTool<T> {
  const name = typeof options?.name === "string" ? options.name : "";
  if (!name) throw invalidInput("journaledTool: options.name (the tool's name) is required");
  if (typeof tool?.execute !== "function")
    throw invalidInput(`tool ${name} has no execute function: there is nothing to journal`);
  if (options.key !== undefined && typeof options.key !== "function")
    throw invalidInput(`tool ${name}: key must be a function (input) => string`);
  const execute = tool.execute as unknown as (
    input: unknown,
    o: JournaledToolExecutionOptions,
  ) => unknown;
  const send = async (input: unknown, o: JournaledToolExecutionOptions): Promise<Ack> => {
    const output = await settleOutput(execute(input, o));
    const requestId = options.requestId?.(output as ToolOutput<T>) ?? null;
    return { requestId, result: output ?? null };
  };
  const provider = new CallProvider({
    name: `tool:${name}`,
    ...(options.idempotent !== undefined ? { idempotent: options.idempotent } : {}),
    ...(options.lookup ? { lookup: options.lookup } : {}),
    // A tool is a function of its input: recovery may send a PLANNED call from the record.
    resend: (req) =>
      send(req.request, {
        toolCallId: `quiesce-recovery:${req.key}`,
        messages: [],
        abortSignal: req.signal,
        idempotencyKey: req.key,
      } as unknown as JournaledToolExecutionOptions),
  });
  const wrapped = async (input: unknown, sdk: ToolExecutionOptions<unknown>): Promise<unknown> => {
    const run = resolveRun(options.run, `tool ${name}`);
    const key = options.key
      ? checkKey(options.key(input as ToolInput<T>), `tool ${name}`)
      : derivedKey(provider.name, input);
    return callOnce(run, {
      key,
      provider,
      request: input,
      context: { tool: name, input },
      send: (req) =>
        send(input, {
          ...sdk,
          abortSignal: sdk?.abortSignal
            ? AbortSignal.any([sdk.abortSignal, req.signal])
            : req.signal,
          idempotencyKey: req.key,
        }),
    });
  };
  return Object.assign({}, tool, {
    execute: wrapped,
    quiesceProvider: provider,
  });
}

/** journaledTool for each tool of a tools object, named by its key; `options` per tool name. */
export function journaledTools<TOOLS extends Record<string, ToolLike>>(
  tools: TOOLS,
  options: {
    [K in keyof TOOLS]?: Omit<
      JournaledToolOptions<ToolInput<TOOLS[K]>, ToolOutput<TOOLS[K]>>,
      "name"
    >;
  } & {
    run?: RunBinding;
  } = {},
): { [K in keyof TOOLS]: JournaledTool<TOOLS[K]> } {
  const out: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const own = (options as Record<string, object | undefined>)[name];
    out[name] = journaledTool(tool, {
      ...(options.run ? { run: options.run } : {}),
      ...own,
      name,
    } as JournaledToolOptions<ToolInput<ToolLike>, ToolOutput<ToolLike>>);
  }
  return out as { [K in keyof TOOLS]: JournaledTool<TOOLS[K]> };
}

/** The journal providers of journaled tools: pass them to openRuntime so recovery can settle their calls. */
export function providersOf(tools: Record<string, unknown>): Provider[] {
  return Object.values(tools)
    .map((t) => (t as { quiesceProvider?: Provider } | null)?.quiesceProvider)
    .filter((p): p is Provider => p !== undefined);
}

/** The key a journaled tool's execute was called with (to pass on as an idempotency key). */
export function idempotencyKeyOf(options: ToolExecutionOptions<unknown>): string {
  const key = (options as Partial<JournaledToolExecutionOptions>).idempotencyKey;
  if (typeof key !== "string")
    throw invalidInput("idempotencyKeyOf: these options do not come from a journaled tool");
  return key;
}

interface StepsLike {
  steps: readonly { content: readonly { type: string; error?: unknown }[] }[];
}

/** The journal's own error among the tool errors of a result (NEEDS_REVIEW, RUN_SUSPENDED, ...). */
export function journalError(result: StepsLike): QuiesceError | null {
  for (const step of result.steps)
    for (const part of step.content)
      if (part.type === "tool-error" && isQuiesceError(part.error)) return part.error;
  return null;
}

/**
 * The AI SDK hands a tool's error to the model as a tool result and goes on; a run that the
 * journal stopped (suspended for maintenance, in review, lease lost) must stop the agent:
 * call this on generateText's result. Use `stopOnJournalError` in `stopWhen` to spare the
 * model call after it.
 */
export function throwJournalError(result: StepsLike): void {
  const e = journalError(result);
  if (e) throw e;
}

/** A stopWhen condition: stop the loop once a tool call met the journal's error. */
export function stopOnJournalError({ steps }: StepsLike): boolean {
  return journalError({ steps: steps.slice(-1) }) !== null;
}

async function settleOutput(v: unknown): Promise<unknown> {
  const value = await v;
  if (value !== null && typeof value === "object" && Symbol.asyncIterator in value) {
    // A streaming tool: the SDK takes its last value as the output; so does the journal.
    let last: unknown;
    for await (const part of value as AsyncIterable<unknown>) last = part;
    return last;
  }
  return value;
}

type ToolInput<T> = T extends ToolLike ? InferToolInput<T> : unknown;
type ToolOutput<T> = T extends ToolLike ? InferToolOutput<T> : unknown;
