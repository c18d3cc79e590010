import { invalidInput } from "../../domain/errors.js";
import type { DrillAgentName } from "./agent-process.js";
import { findChromium } from "./chromium.js";

/** The optional peer dependencies each framework agent loads (the core never loads them). */
const PEERS: Record<DrillAgentName, readonly string[]> = {
  demo: [],
  "ai-sdk": ["ai"],
  mcp: ["@modelcontextprotocol/sdk/client/index.js"],
  browser: ["playwright-core"],
};

const INSTALL: Record<string, string> = {
  ai: "ai@7",
  "@modelcontextprotocol/sdk/client/index.js": "@modelcontextprotocol/sdk@1",
  "playwright-core": "playwright-core@1",
};

/**
 * Before any process starts: the agent's framework is installed next to quiesce, and the
 * browser agent has a system chromium. Otherwise one sentence that says how (exit 2).
 */
export function agentPrerequisites(agent: DrillAgentName): void {
  for (const spec of PEERS[agent]) {
    try {
      import.meta.resolve(spec);
    } catch {
      throw invalidInput(
        `the ${agent} drill needs ${INSTALL[spec]}, which is not installed: npm install ${INSTALL[spec]} (an optional peer dependency of quiesce)`,
      );
    }
  }
  if (agent === "browser") findChromium();
}
