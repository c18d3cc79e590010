import type { Command } from "commander";
import { formatDuration } from "../../domain/duration.js";
import { validateWaveName } from "../../domain/wave-input.js";
import { HostState } from "../../domain/wave-state.js";
import { sleep } from "../../process/clock.js";
import type { Leases } from "../../lease/leases.js";
import { listWaves, waveStatus, type WaveStatus } from "../../wave/wave-status.js";
import { withLeases, withStore, READ_ONLY } from "../context.js";
import { printJson, table } from "../output.js";
import { bar, countsText, LiveBlock, progressLines } from "../wave-display.js";

interface StatusFlags {
  json?: boolean;
  all?: boolean;
  once?: boolean;
  follow?: boolean;
  store?: string;
  config?: string;
}

export function registerWaveStatus(wave: Command): void {
  withStore(
    wave
      .command("status")
      .summary("a wave's hosts, counts, budget, holder and ETA (live on a terminal)")
      .description(
        "A wave's hosts, counts, failures against the budget, current holder and ETA\n" +
          "(every wave, without a name). On a terminal, a running wave is shown live\n" +
          "until it stops (--once: just now); --follow prints a line per host change.",
      )
      .argument("[name]")
      .option("--json", "JSON output (every host)")
      .option(
        "--all",
        "list every host (default: those past pending; on a big wave, those not succeeded)",
      )
      .option("--once", "print the status once, even on a terminal")
      .option("--follow", "print a line per host change until the wave stops (no terminal needed)"),
  ).action(async (name: string | undefined, flags: StatusFlags) => {
    if (name !== undefined) validateWaveName(name);
    await withLeases(
      flags,
      async (leases) => {
        if (name === undefined) return printList(leases, flags.json === true);
        const s = await waveStatus(leases.store, name);
        if (flags.json) return printJson(s);
        const running = s.wave.state === "running" && s.holder?.state === "live";
        if (running && flags.follow) return follow(leases, name, s);
        if (running && !flags.once && process.stdout.isTTY) return live(leases, name);
        process.stdout.write(statusText(s, flags.all === true));
      },
      READ_ONLY,
    );
  });
}

async function printList(leases: Leases, json: boolean): Promise<void> {
  const l = await listWaves(leases.store);
  if (json) return printJson(l);
  if (l.waves.length === 0) return void process.stdout.write("no waves\n");
  process.stdout.write(
    table(
      ["WAVE", "STATE", "HOSTS", "PROGRESS", "CREATED"],
      l.waves.map((w) => [
        w.name,
        w.state,
        String(w.hosts),
        Object.entries(w.counts)
          .map(([k, v]) => `${v} ${k}`)
          .join(", "),
        w.createdAt ?? "-",
      ]),
    ),
  );
}

function viewOf(s: WaveStatus) {
  const now = Date.parse(s.storeNow);
  return {
    wave: s.wave.name,
    phase: s.wave.state,
    batch: null,
    hosts: s.wave.hosts,
    counts: s.counts,
    maxFailures: s.budget.maxFailures,
    running: s.hosts
      .filter((h) => h.state === HostState.RUNNING)
      .map((h) => ({ host: h.host, forMs: h.startedAt ? now - Date.parse(h.startedAt) : 0 })),
    eta: s.eta && { at: Date.parse(s.eta.at ?? s.storeNow), inMs: s.eta.inMs },
    note: s.wave.reason,
  };
}

/** Redraws the progress block until the wave stops running (Ctrl-C leaves). */
async function live(leases: Leases, name: string): Promise<void> {
  const block = new LiveBlock(process.stdout);
  const stop = new AbortController();
  const onSig = () => stop.abort();
  process.once("SIGINT", onSig);
  try {
    for (;;) {
      const s = await waveStatus(leases.store, name);
      block.render(progressLines(viewOf(s), process.stdout.columns));
      if (s.wave.state !== "running" || s.holder?.state !== "live") {
        block.end();
        process.stdout.write(statusText(s, false));
        return;
      }
      await sleep(500, stop.signal).catch(() => undefined);
      if (stop.signal.aborted) return block.end();
    }
  } finally {
    process.off("SIGINT", onSig);
  }
}

/** A plain line per host change until the wave stops running. */
async function follow(leases: Leases, name: string, first: WaveStatus): Promise<void> {
  const seen = new Map(first.hosts.map((h) => [h.host, h.state]));
  process.stdout.write(`wave ${name}: ${countsText(first.counts)}\n`);
  for (;;) {
    await sleep(500);
    const s = await waveStatus(leases.store, name);
    for (const h of s.hosts) {
      if (seen.get(h.host) === h.state) continue;
      seen.set(h.host, h.state);
      process.stdout.write(
        `${new Date().toISOString()} host ${h.host}: ${h.state}${h.reason ? `: ${h.reason}` : ""}\n`,
      );
    }
    if (s.wave.state !== "running" || s.holder?.state !== "live") {
      process.stdout.write(
        `wave ${name} ${s.wave.state}${s.wave.reason ? `: ${s.wave.reason}` : ""}\n`,
      );
      return;
    }
  }
}

/** Past this many hosts beyond pending, the table leaves the succeeded ones out (--all: all). */
const TABLE_LIMIT = 50;

export function statusText(s: WaveStatus, all: boolean): string {
  const w = s.wave;
  const holder = s.holder
    ? `${s.holder.state === "live" ? "held" : "EXPIRED lease"} by run ${s.holder.runId} on ${s.holder.host}${s.holder.pid !== null ? ` pid ${s.holder.pid}` : ""}, token ${s.holder.token}, heartbeat ${formatDuration(s.holder.heartbeatAgeMs)} ago`
    : "none";
  const done = s.counts.succeeded + s.counts.failed;
  const rows: [string, string][] = [
    [
      "wave",
      `${w.name}: ${w.state}${w.reason ? ` (${w.reason})` : ""}${w.state === "running" && s.holder?.state !== "live" ? `, but its agent is gone (no live lease): quiesce wave resume ${w.name}` : ""}`,
    ],
    ["hosts", `${w.hosts}: ${countsText(s.counts)}`],
    ["progress", `${bar(done, w.hosts)} ${done}/${w.hosts}`],
    [
      "budget",
      `${s.budget.failed} failed of at most ${s.budget.maxFailures} (${s.budget.spec})${s.budget.spent ? ": SPENT" : `, ${s.budget.left} left`}`,
    ],
    [
      "plan",
      `batches of ${w.batchSize} (${w.batch})${w.window ? `, window ${w.window}` : ""}${w.maxPerGroup !== null ? `, at most ${w.maxPerGroup} per group` : ""}`,
    ],
    ["holder", holder],
    [
      "agent",
      s.agent
        ? `${s.agent.state}${s.agent.stopRequested ? ` (stop requested: ${s.agent.stopRequested})` : ""}`
        : "never run",
    ],
    ["ETA", s.eta ? `${s.eta.at} (in ${formatDuration(s.eta.inMs)}; ${s.eta.basis})` : "-"],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  let out = rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n") + "\n";
  let shown = all ? s.hosts : s.hosts.filter((h) => h.state !== HostState.PENDING);
  let quiet = 0;
  if (!all && shown.length > TABLE_LIMIT) {
    // A big wave: the hosts that need a look, not thousands of succeeded ones.
    const rest = shown.filter((h) => h.state !== HostState.SUCCEEDED);
    quiet = shown.length - rest.length;
    shown = rest;
  }
  if (shown.length > 0)
    out +=
      "\n" +
      table(
        ["HOST", "GROUP", "STATE", "TRIES", "TOOK", "REASON"],
        shown.map((h) => [
          h.host,
          h.group ?? "-",
          h.state,
          String(h.attempts),
          h.durationMs === null ? "-" : formatDuration(h.durationMs),
          h.reason ?? "",
        ]),
      );
  if (quiet > 0) out += `\n${quiet} succeeded host(s) not listed (--all lists every host)\n`;
  if (s.review.length > 0)
    out +=
      "\nneeds review: find out whether the patch landed, then record it and run the wave again:\n" +
      s.review.map((r) => `  ${r.resolve}`).join("\n") +
      "\n";
  return out;
}
