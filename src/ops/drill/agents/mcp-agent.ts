/**
 * `quiesce drill --agent mcp`: the agent starts the drill's MCP server over stdio (the official
 * SDK) and calls its `send_invoice` tool through journaledMcpClient. The server dies with the
 * agent (its stdin closes); the restarted agent starts a new one.
 */
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { journaledMcpClient, withRun } from "../../../agents/mcp.js";
import { runDrillAgent } from "../agent-loop.js";
import { demoCapabilities, lookupEffect } from "../demo-client.js";
import { jobKey } from "../jobs.js";

const SERVER = fileURLToPath(new URL("./mcp-server.js", import.meta.url));

runDrillAgent(async (providerUrl) => {
  const caps = await demoCapabilities(providerUrl);
  const mcp = new Client({ name: "quiesce-drill", version: "1.0.0" });
  await mcp.connect(
    new StdioClientTransport({ command: process.execPath, args: [SERVER, providerUrl] }),
  );
  const client = journaledMcpClient(mcp, {
    name: "billing-mcp",
    key: (_tool, args) => jobKey(String(args.job)),
    idempotent: caps.idempotencyKey,
    ...(caps.statusLookup ? { lookup: (key: string) => lookupEffect(providerUrl, key) } : {}),
    requestId: (r) =>
      (r as { structuredContent?: { requestId?: string } }).structuredContent?.requestId,
  });
  return {
    providers: [client.quiesceProvider],
    perform: (run, job) =>
      withRun(run, () => client.callTool({ name: "send_invoice", arguments: { job, amount: 5 } })),
    close: () => mcp.close(),
  };
});
