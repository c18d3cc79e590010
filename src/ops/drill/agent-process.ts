import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The agents the drill can run: the demo agent and one per framework adapter. */
export const DRILL_AGENTS = {
  demo: "./demo-agent.js",
  "ai-sdk": "./agents/ai-sdk-agent.js",
  mcp: "./agents/mcp-agent.js",
  browser: "./agents/browser-agent.js",
} as const;
export type DrillAgentName = keyof typeof DRILL_AGENTS;

const entry = (agent: DrillAgentName) =>
  fileURLToPath(new URL(DRILL_AGENTS[agent], import.meta.url));

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export type AgentLine = Record<string, unknown> & { type: string };

/**
 * A drill agent as a real child process: its JSON lines as they arrive, its exit, and a way
 * to wait for a given line. `crashAt` sets QUIESCE_CRASH_AT, so it SIGKILLs itself there.
 */
export class AgentProcess {
  readonly lines: AgentLine[] = [];
  readonly exited: Promise<AgentExit>;
  stderr = "";
  private readonly child: ChildProcess;
  private readonly listeners = new Set<() => void>();
  private exitInfo: AgentExit | null = null;

  constructor(
    args: readonly string[],
    crashAt: string | null,
    extraEnv: NodeJS.ProcessEnv = {},
    agent: DrillAgentName = "demo",
  ) {
    const env: NodeJS.ProcessEnv = { ...process.env, QUIESCE_DEBUG: "", ...extraEnv };
    delete env.QUIESCE_CRASH_AT;
    if (crashAt) env.QUIESCE_CRASH_AT = crashAt;
    this.child = spawn(process.execPath, [entry(agent), ...args], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let buf = "";
    this.child.stdout!.setEncoding("utf8");
    this.child.stdout!.on("data", (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf("\n")) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          this.lines.push(JSON.parse(line) as AgentLine);
        } catch {
          this.lines.push({ type: "text", text: line });
        }
      }
      this.wake();
    });
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (d: string) => (this.stderr += d));
    this.exited = new Promise((resolve) =>
      this.child.once("exit", (code, signal) => {
        this.exitInfo = { code, signal };
        this.wake();
        resolve(this.exitInfo);
      }),
    );
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** The first line of `type` (or null if the process exits or `timeoutMs` passes first). */
  async line(type: string, timeoutMs: number): Promise<AgentLine | null> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const found = this.lines.find((l) => l.type === type);
      if (found) return found;
      if (this.exitInfo || Date.now() > end) return null;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(1, end - Date.now()));
        this.listeners.add(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Waits for the exit, SIGKILLing the process if it takes longer than `timeoutMs`. */
  async exit(timeoutMs: number): Promise<AgentExit & { timedOut: boolean }> {
    let timedOut = false;
    const t = setTimeout(() => {
      timedOut = true;
      this.kill();
    }, timeoutMs);
    const e = await this.exited;
    clearTimeout(t);
    return { ...e, timedOut };
  }

  kill(): void {
    if (!this.exitInfo) this.child.kill("SIGKILL");
  }

  private wake(): void {
    const ls = [...this.listeners];
    this.listeners.clear();
    for (const l of ls) l();
  }
}
