/**
 * The MCP server of `quiesce drill --agent mcp` (the official SDK, stdio): one tool,
 * `send_invoice`, whose side effect is a POST to the drill's provider with the idempotency key
 * the journaled client put in `_meta`. It declares `idempotentHint: true`, which the client
 * must not take as proof (the `none` rows still quarantine).
 *
 *   node mcp-server.js PROVIDER_URL
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { MCP_KEY_META } from "../../../agents/mcp.js";
import { postEffect } from "../demo-client.js";

const providerUrl = process.argv[2]!;
const server = new McpServer({ name: "drill-billing", version: "1.0.0" });
server.registerTool(
  "send_invoice",
  {
    description: "Send the invoice of a job",
    inputSchema: { job: z.string(), amount: z.number() },
    annotations: { idempotentHint: true },
  },
  async (args, extra) => {
    const key = extra._meta?.[MCP_KEY_META];
    if (typeof key !== "string")
      return { isError: true, content: [{ type: "text", text: "no idempotency key in _meta" }] };
    const answer = await postEffect(providerUrl, key, args, extra.signal);
    return {
      content: [{ type: "text", text: JSON.stringify(answer) }],
      structuredContent: answer,
    };
  },
);
await server.connect(new StdioServerTransport());
