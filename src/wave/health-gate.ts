import { sleep } from "../process/clock.js";
import type { HostContext } from "./patch-provider.js";
import { describeExit } from "./shell-command.js";
import type { WorkerContext } from "./host-worker.js";

export interface HealthResult {
  ok: boolean;
  /** What the last attempt said. */
  why: string;
  attempts: number;
  exitCode: number | null;
}

/**
 * The health gate: the `--health` command must exit 0 before the host counts as succeeded.
 * A host rebooting after its patch fails it for a while, so it is retried every
 * `--health-interval` until `--health-timeout` (default: one attempt). Aborting `signal` (a
 * forced stop, a lost lease) throws.
 */
export async function runHealthGate(
  ctx: WorkerContext,
  hctx: HostContext,
  command: string,
  signal: AbortSignal,
): Promise<HealthResult> {
  const o = ctx.opts;
  const deadline = Date.now() + o.healthTimeoutMs;
  for (let attempt = 1; ; attempt++) {
    const exit = await ctx.provider.run("health", command, hctx, signal);
    if (exit.aborted || signal.aborted) throw signal.reason as Error;
    if (exit.exitCode === 0) return { ok: true, why: "exited 0", attempts: attempt, exitCode: 0 };
    if (Date.now() + o.healthIntervalMs > deadline) {
      const said = exit.lastLine ? ` (last output: ${exit.lastLine})` : "";
      return {
        ok: false,
        why: `the health command ${describeExit(exit)}${said}${attempt > 1 ? ` after ${attempt} attempts` : ""}`,
        attempts: attempt,
        exitCode: exit.exitCode,
      };
    }
    await sleep(o.healthIntervalMs, signal);
  }
}
