import { MockLanguageModelV4 } from "ai/test";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/**
 * A scripted AI SDK model (the SDK's own mock from `ai/test`): on its first turn it calls each tool of `calls` (in one step); once the
 * prompt holds tool results it answers with text. No network, no API key.
 */
export function scriptedModel(calls: { tool: string; input: unknown }[]): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doGenerate: (o) => {
      const answered = o.prompt.some((m) => m.role === "tool");
      return Promise.resolve(
        answered
          ? {
              content: [{ type: "text" as const, text: "done" }],
              finishReason: { unified: "stop" as const, raw: undefined },
              usage,
              warnings: [],
            }
          : {
              content: calls.map((c, i) => ({
                type: "tool-call" as const,
                toolCallId: `call-${i}-${Math.random().toString(36).slice(2)}`,
                toolName: c.tool,
                input: JSON.stringify(c.input),
              })),
              finishReason: { unified: "tool-calls" as const, raw: undefined },
              usage,
              warnings: [],
            },
      );
    },
  });
}
