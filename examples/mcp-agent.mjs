// An MCP client whose tool calls go through the journal: a call made twice in a run (a retry,
// a replayed agent loop) reaches the server once.   node examples/mcp-agent.mjs
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { openRuntime } from "quiesce";
import { journaledMcpClient, MCP_KEY_META, withRun } from "quiesce/mcp";

// The server: one tool with a side effect. (A real one runs elsewhere, over stdio or HTTP.)
const posted = [];
const server = new McpServer({ name: "chat", version: "1.0.0" });
server.registerTool(
  "post_message",
  { inputSchema: { channel: z.string(), text: z.string() }, annotations: { idempotentHint: true } },
  async (args, extra) => {
    posted.push({ ...args, key: extra._meta?.[MCP_KEY_META] });
    return { content: [{ type: "text", text: `posted #${posted.length}` }] };
  },
);
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await server.connect(serverSide);
const mcp = new Client({ name: "example", version: "1.0.0" });
await mcp.connect(clientSide);

// The annotation above is a hint, never proof: only `idempotent` / `lookup` here change recovery.
const client = journaledMcpClient(mcp, {
  name: "chat-mcp",
  key: (tool, args) => `slack:${args.channel}:${tool}:release-1.4`,
});
const store = process.env.QUIESCE_STORE ?? join(tmpdir(), "quiesce-examples.db");
const rt = await openRuntime({ store, id: "example-mcp", providers: [client.quiesceProvider] });
const run = await rt.startRun();
const call = { name: "post_message", arguments: { channel: "releases", text: "1.4 is out" } };
const first = await withRun(run, () => client.callTool(call));
const again = await withRun(run, () => client.callTool(call)); // answered from the journal
console.log(first.content[0].text, "/", again.content[0].text);
console.log("messages the server posted:", posted.length, posted[0].key); // 1
await run.complete();
await rt.stop();
await mcp.close();
