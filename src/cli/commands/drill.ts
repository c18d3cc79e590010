import type { Command } from "commander";
import { loadConfig } from "../../config/resolve-config.js";
import { formatDuration, parseDuration } from "../../domain/duration.js";
import { invalidInput } from "../../domain/errors.js";
import { CRASH_POINTS } from "../../fault/crash-points.js";
import { DRILL_AGENTS, type DrillAgentName } from "../../ops/drill/agent-process.js";
import { runDrill, type DrillReport } from "../../ops/drill/drill.js";
import { DRILL_POINTS, type DrillPoint } from "../../ops/drill/scenarios.js";
import { Exit } from "../exit-codes.js";
import { say, withStore } from "../context.js";
import { printJson, table } from "../output.js";

interface DrillFlags {
  provider: string;
  agent: string;
  point?: string[];
  parallel: string;
  keep?: boolean;
  ttl?: string;
  list?: boolean;
  json?: boolean;
  store?: string;
  config?: string;
}

/** `quiesce drill`: kill a demo agent at each of the six points, restart it, check recovery. */
export function registerDrill(program: Command): void {
  withStore(
    program
      .command("drill")
      .summary(
        "crash drill: SIGKILL a demo agent at six points, restart it, check what recovery did",
      )
      .description(
        "For each point, a demo agent (a real child process) runs a job against a provider on 127.0.0.1\n" +
          "and SIGKILLs itself there (QUIESCE_CRASH_AT); a second process restarts and recovers. One row\n" +
          "per point: expected vs observed, run, checkpoint sequence, provider request id, PASS/FAIL.\n" +
          "The provider counts executions per idempotency key: each effect must land at most once.\n" +
          "--agent runs a real framework agent instead of the demo one: ai-sdk (a generateText loop with a\n" +
          "scripted mock model and a journaled tool), mcp (an MCP server over stdio called through\n" +
          "journaledMcpClient), browser (the system chromium via playwright-core submitting a checkout form;\n" +
          "needs /usr/bin/chromium or QUIESCE_CHROMIUM, never downloads one).\n" +
          "Exit 0 when every row passes, 1 otherwise.",
      )
      .option(
        "--provider <mode>",
        "full (idempotency keys + status lookup), none (neither), or both",
        "full",
      )
      .option(
        "--agent <name>",
        `who makes the side effects (${Object.keys(DRILL_AGENTS).join(", ")})`,
        "demo",
      )
      .option("--point <name...>", `only these points (${DRILL_POINTS.join(", ")})`)
      .option("--parallel <n>", "rows at once", "3")
      .option(
        "--ttl <duration>",
        "the agents' lease TTL (a restart waits about this long); default 1s, 3s for --agent browser",
      )
      .option("--keep", "keep the drill's runtimes and runs in the store (deleted by default)")
      .option("--list", "list every named crash point (QUIESCE_CRASH_AT) and exit")
      .option("--json", "JSON output"),
  ).action(async (flags: DrillFlags) => {
    if (flags.list) {
      if (flags.json) printJson(CRASH_POINTS);
      else process.stdout.write(table(["POINT", "WHERE"], Object.entries(CRASH_POINTS)));
      return;
    }
    if (!["full", "none", "both"].includes(flags.provider))
      throw invalidInput(`--provider: "${flags.provider}" is not full, none or both`);
    if (!Object.hasOwn(DRILL_AGENTS, flags.agent))
      throw invalidInput(
        `--agent: "${flags.agent}" is not a drill agent (${Object.keys(DRILL_AGENTS).join(", ")})`,
      );
    for (const p of flags.point ?? [])
      if (!(DRILL_POINTS as readonly string[]).includes(p))
        throw invalidInput(`--point: "${p}" is not a drill point (${DRILL_POINTS.join(", ")})`);
    const parallel = Number(flags.parallel);
    if (!Number.isInteger(parallel) || parallel < 1 || parallel > 12)
      throw invalidInput(`--parallel: "${flags.parallel}" is not a number from 1 to 12`);
    const ttl = flags.ttl === undefined ? undefined : parseDuration(flags.ttl, "--ttl");
    const config = loadConfig(flags);
    const report = await runDrill({
      ...(config.store !== undefined ? { store: config.store } : {}),
      provider: flags.provider as "full" | "none" | "both",
      agent: flags.agent as DrillAgentName,
      ...(flags.point ? { points: flags.point as DrillPoint[] } : {}),
      parallel,
      ...(ttl !== undefined ? { ttl: `${ttl}ms` } : {}),
      keep: flags.keep === true,
      onRow: (r) => {
        if (!flags.json)
          say(
            `drill: ${r.agent === "demo" ? "" : `${r.agent} `}${r.point} (${r.provider}) ${r.pass ? "PASS" : "FAIL"}`,
          );
      },
    });
    if (flags.json) printJson(report);
    else process.stdout.write(render(report));
    process.exitCode = report.pass ? Exit.OK : Exit.FAILURE;
  });
}

function render(r: DrillReport): string {
  const rows = r.rows.map((x) => [
    x.point,
    x.provider,
    x.expected,
    x.observed,
    x.runId,
    `${x.seqAtKill ?? "-"}->${x.seq ?? "-"}`,
    x.requestId ?? (x.providerRequestId ? `(${x.providerRequestId})` : "-"),
    x.final,
    x.pass ? "PASS" : "FAIL",
  ]);
  const headers = [
    "POINT",
    "PROVIDER",
    "EXPECTED",
    "OBSERVED",
    "RUN",
    "SEQ",
    "REQUEST",
    "FINAL",
    "RESULT",
  ];
  let out = table(headers, rows) + "\n";
  for (const x of r.rows) {
    const deliveries = Object.entries(x.deliveries).map(([k, n]) => `${k} x${n}`);
    out += `${x.point} (${x.where}, provider ${x.provider}): ${x.pass ? "PASS" : "FAIL"}\n`;
    out += `  expected: ${x.expectedDetail}\n  observed: ${x.observedDetail}\n`;
    out += `  deliveries: ${deliveries.join(", ") || "none"}\n`;
    for (const f of x.failures) out += `  FAIL: ${f}\n`;
  }
  const passed = r.rows.filter((x) => x.pass).length;
  out += `\n${passed}/${r.rows.length} PASS${r.agent === "demo" ? "" : ` (agent ${r.agent})`} on ${r.backend} ${r.store} in ${formatDuration(r.durationMs)}\n`;
  return out;
}
