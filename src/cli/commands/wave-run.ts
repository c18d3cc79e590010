import type { Command } from "commander";
import { formatDuration, parseDuration } from "../../domain/duration.js";
import { parsePositiveInt, validateWaveName } from "../../domain/wave-input.js";
import { loadConfig } from "../../config/resolve-config.js";
import { checkRemoteGrace } from "../../domain/remote-grace.js";
import { leaseTiming } from "../../domain/lease.js";
import { resolveStore } from "../../store/open-store.js";
import { defaultWaveLogDir } from "../../wave/log-dir.js";
import type { HostOutcome } from "../../wave/host-worker.js";
import { resolveRunOptions, type WaveRunOptions } from "../../wave/run-options.js";
import { runWave } from "../../wave/run-wave.js";
import type { WaveAgent } from "../../wave/wave-agent.js";
import {
  closeSession,
  openSession,
  say,
  withStore,
  withTakeoverFlags,
  type TakeoverFlags,
} from "../context.js";
import { printJson } from "../output.js";
import { LiveBlock, progressLines } from "../wave-display.js";

interface RunFlags extends TakeoverFlags {
  patch?: string;
  check?: string;
  via?: string;
  health?: string;
  healthTimeout?: string;
  healthInterval?: string;
  concurrency?: string;
  idempotent?: boolean;
  ttl: string;
  heartbeat?: string;
  wait?: string;
  hostWait: string;
  leftoverWait: string;
  respect?: string;
  maxFailures?: string;
  drainTimeout: string;
  grace: string;
  logDir?: string;
  log: boolean;
  json?: boolean;
  store?: string;
  config?: string;
}

function runFlags(cmd: Command, resume: boolean): Command {
  return withTakeoverFlags(
    withStore(
      cmd
        .argument("<name>")
        .option(
          "--patch <cmd>",
          resume
            ? "the patch command (default: the previous run's)"
            : "the patch command; {host} {wave} {group} are filled in, shell-quoted",
        )
        .option(
          "--check <cmd>",
          "says whether a host is patched: exit 0 yes, 1 no, else unknown (reconciles a crash)",
        )
        .option(
          "--via <cmd>",
          "run patch, check and health on the host through this (e.g. 'ssh {host}'), each under a remote guard that stops it there by the host lease's deadline (needs bash on the host)",
        )
        .option(
          "--health <cmd>",
          "must exit 0 before a host counts as succeeded and before the next batch",
        )
        .option(
          "--health-timeout <duration>",
          "retry the health command this long (default: one attempt)",
        )
        .option("--health-interval <duration>", "between health attempts (default 5s)")
        .option("--concurrency <n>", "hosts at once within a batch (default: the batch size)")
        .option("--idempotent", "the patch may run again where whether it ran is unknown")
        .option("--ttl <duration>", "TTL of the wave's and the hosts' leases", "30s")
        .option("--heartbeat <duration>", "how often to renew them (default: TTL/3)")
        .option(
          "--wait <duration>",
          resume
            ? "wait this long for the wave's lease (a crashed agent's must expire first; default 2 x TTL + 5s)"
            : "wait this long for the wave's lease (default 0: exit 75 at once if another agent runs it)",
        )
        .option(
          "--host-wait <duration>",
          "wait this long for a busy host's lease before skipping it",
          "0s",
        )
        .option(
          "--leftover-wait <duration>",
          "wait this long for a host an earlier agent left mid-patch (its patch may still run)",
          "10m",
        )
        .option(
          "--respect <systems>",
          "also skip a host while these systems (comma-separated) hold a lease on it",
        )
        .option("--max-failures <n|p%>", "override the wave's failure budget for this run")
        .option(
          "--drain-timeout <duration>",
          "how long a stop lets the hosts in flight finish",
          "1h",
        )
        .option(
          "--grace <duration>",
          "stopping a command: SIGTERM, then SIGKILL after this long",
          "10s",
        )
        .option(
          "--log-dir <dir>",
          "one log file per host (default: beside a SQLite store, <store dir>/waves/NAME)",
        )
        .option("--no-log", "discard the commands' output")
        .option("--json", "print the outcome as JSON"),
    ),
  );
}

export function registerWaveRun(wave: Command): void {
  runFlags(
    wave
      .command("run")
      .summary("run a wave (or continue it) under its lease, batch after batch")
      .description(
        "Run the wave batch after batch, each host under its lease (host:NAME), its\n" +
          "patch journalled, its health gate passed before it counts. Resumes where an\n" +
          "earlier agent stopped or crashed. Exit 0 completed; 1 failures or halted;\n" +
          "75 another agent runs it, or hosts were busy; 76 lease lost.",
      ),
    false,
  ).action((name: string, flags: RunFlags) => runAction(name, flags, false));
  runFlags(
    wave
      .command("resume")
      .summary("resume a wave whose agent stopped or crashed (takes its lease over)")
      .description(
        "Resume a wave whose agent stopped or crashed: wait for a dead agent's lease to\n" +
          "expire, take it over with proof of death, settle the hosts it left mid-way,\n" +
          "and go on. The commands default to the previous run's.",
      ),
    true,
  ).action((name: string, flags: RunFlags) => runAction(name, flags, true));
}

async function runAction(name: string, flags: RunFlags, resume: boolean): Promise<void> {
  validateWaveName(name);
  const config = loadConfig(flags); // every bad setting fails here, before the store is touched
  const ttlMs = parseDuration(flags.ttl, "--ttl");
  const ms = (v: string | undefined, what: string) =>
    v === undefined ? undefined : parseDuration(v, what);
  const o: WaveRunOptions = {
    wave: name,
    ...(flags.patch !== undefined ? { patch: flags.patch } : {}),
    ...(flags.check !== undefined ? { check: flags.check } : {}),
    ...(flags.health !== undefined ? { health: flags.health } : {}),
    ...(flags.via !== undefined ? { via: flags.via } : {}),
    ...(flags.healthTimeout !== undefined
      ? { healthTimeout: ms(flags.healthTimeout, "--health-timeout") }
      : {}),
    ...(flags.healthInterval !== undefined
      ? { healthInterval: ms(flags.healthInterval, "--health-interval") }
      : {}),
    ...(flags.concurrency !== undefined
      ? { concurrency: parsePositiveInt(flags.concurrency, "--concurrency") }
      : {}),
    ...(flags.idempotent ? { idempotent: true } : {}),
    ttl: ttlMs,
    ...(flags.heartbeat !== undefined
      ? { heartbeat: parseDuration(flags.heartbeat, "--heartbeat") }
      : {}),
    wait:
      flags.wait !== undefined
        ? parseDuration(flags.wait, "--wait")
        : resume
          ? 2 * ttlMs + 5000
          : 0,
    hostWait: parseDuration(flags.hostWait, "--host-wait"),
    leftoverWait: parseDuration(flags.leftoverWait, "--leftover-wait"),
    ...(flags.respect !== undefined
      ? {
          respect: flags.respect
            .split(",")
            .map((x) => x.trim())
            .filter(Boolean),
        }
      : {}),
    ...(flags.maxFailures !== undefined ? { maxFailures: flags.maxFailures } : {}),
    drainTimeout: flags.drainTimeout,
    grace: parseDuration(flags.grace, "--grace"),
    logDir:
      flags.log === false
        ? null
        : (flags.logDir ?? defaultWaveLogDir(resolveStore(config.store), name)),
    signals: true,
  };
  // Everything that can be checked without the wave is checked before the store is opened.
  const resolved = resolveRunOptions({ ...o, patch: o.patch ?? "true" }, null);
  checkRemoteGrace(
    config.takeover.remoteGraceMs,
    resolved.graceMs,
    leaseTiming(resolved.ttlMs, resolved.heartbeatMs).safetyMarginMs,
  );
  const session = await openSession(flags);
  session.leases.setKeeperEvents({
    onRenewError: (e) =>
      say(`heartbeat failed (${(e as Error).message}); retrying until the lease's local deadline`),
  });
  const tty = process.stderr.isTTY === true;
  const block = tty ? new LiveBlock(process.stderr) : null;
  let agent: WaveAgent | null = null;
  const draw = () =>
    agent && block?.render(progressLines(agent.snapshot(), process.stderr.columns));
  const timer = block ? setInterval(draw, 500) : null;
  timer?.unref();
  const line = (l: string) =>
    block
      ? block.log(
          `quiesce: ${l}`,
          agent ? progressLines(agent.snapshot(), process.stderr.columns) : null,
        )
      : say(l);
  let exitCode = 1;
  try {
    const r = await runWave(session.leases, o, {
      onMessage: line,
      onAgent: (a) => (agent = a),
      onHost: ({ host, outcome, ms }) => {
        if (outcome === null) {
          if (!tty) say(`host ${host}: running`);
          return;
        }
        line(`host ${host}: ${outcomeText(outcome)} (${formatDuration(ms)})`);
      },
    });
    if (timer) clearInterval(timer);
    draw();
    block?.end();
    if (flags.json)
      printJson(
        r.refusal ? { ...r, refusal: { reason: r.refusal.reason, message: r.refusal.message } } : r,
      );
    else if (r.outcome === "not_acquired") say(r.summary);
    else process.stdout.write(`${r.summary}\n`);
    exitCode = r.exitCode;
  } finally {
    if (timer) clearInterval(timer);
    await closeSession(session);
  }
  process.exit(exitCode);
}

function outcomeText(o: HostOutcome): string {
  switch (o.kind) {
    case "succeeded":
      return "succeeded";
    case "failed":
      return `failed: ${o.health ? "health gate: " : ""}${o.why}`;
    case "skipped":
      return `skipped: ${o.why}`;
    case "unfinished":
      return `unfinished: ${o.why}`;
    case "needs_review":
      return `needs review: ${o.why}`;
    case "blocked":
      return `not settled: ${o.why}`;
    case "not_started":
      return "not started (the wave is stopping)";
  }
}
