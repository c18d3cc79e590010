import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { parseDuration } from "../../domain/duration.js";
import { invalidInput } from "../../domain/errors.js";
import { drainTimeout } from "../../domain/maintenance-policy.js";
import { validateMaintenanceId } from "../../domain/journal-names.js";
import { parsePositiveInt, validateWaveName } from "../../domain/wave-input.js";
import { operatorName } from "../../journal/inspect.js";
import { createWave, prepareWave } from "../../wave/create-wave.js";
import { stopWave, waitForWaveStop } from "../../wave/stop-wave.js";
import { waveStatus } from "../../wave/wave-status.js";
import { loadConfig } from "../../config/resolve-config.js";
import { Exit } from "../exit-codes.js";
import { printJson } from "../output.js";
import { withLeases, withStore } from "../context.js";
import { registerWaveRun } from "./wave-run.js";
import { registerWaveStatus } from "./wave-status.js";
import { registerWaveAdmin } from "./wave-admin.js";

interface CreateFlags {
  hosts?: string;
  batch: string;
  maxFailures: string;
  window?: string;
  maxPerGroup?: string;
  json?: boolean;
  store?: string;
  config?: string;
}

/** `quiesce wave create|run|resume|status|stop`: rolling patch waves across hosts. */
export function registerWave(program: Command): void {
  const wave = program
    .command("wave")
    .summary("rolling patch waves across hosts: create, run, resume, status, stop, retry, delete")
    .description(
      "A wave patches hosts in batches, each under its own lease (host:NAME).\n" +
        "Host states are durable: pending -> running -> succeeded | failed |\n" +
        "unfinished | needs_review | skipped. Health gates and a failure budget stop\n" +
        "it; after a crash the next agent takes it over and resumes where it stopped.",
    );

  withStore(
    wave
      .command("create")
      .summary("create a wave from a hosts file (every host pending)")
      .description(
        "create a wave (every host pending); bad input is refused and nothing is written",
      )
      .argument("<name>")
      .option(
        "--hosts <file>",
        "hosts file, one host a line, optionally `group=NAME`; - reads stdin",
      )
      .option("--batch <n|p%>", "hosts per batch: a number or a share of the hosts", "1")
      .option("--max-failures <n|p%>", "failed hosts the whole wave tolerates before it stops", "0")
      .option(
        "--window <spec>",
        "hosts start only inside this window: 'Sat 02:00-06:00' (the agent's local time), 'Mon-Fri 22:00-02:00 UTC', 'daily 03:00-04:00'",
      )
      .option("--max-per-group <n>", "at most this many hosts of one group in maintenance at once")
      .option("--json", "print the wave as JSON"),
  ).action(async (name: string, flags: CreateFlags) => {
    validateWaveName(name);
    if (flags.hosts === undefined)
      throw invalidInput("wave create: --hosts FILE (or - for stdin) is required");
    loadConfig(flags);
    const text = readHosts(flags.hosts);
    const prepared = prepareWave({
      name,
      hosts: text,
      hostsSource: flags.hosts === "-" ? "stdin" : flags.hosts,
      batch: flags.batch,
      maxFailures: flags.maxFailures,
      window: flags.window ?? null,
      maxPerGroup:
        flags.maxPerGroup === undefined
          ? null
          : parsePositiveInt(flags.maxPerGroup, "--max-per-group"),
    });
    await withLeases(flags, async (leases) => {
      const w = await createWave(leases.store, prepared);
      if (flags.json) printJson((await waveStatus(leases.store, w.name)).wave);
      else process.stdout.write(`${prepared.def.event.message}\n`);
    });
  });

  registerWaveRun(wave);
  registerWaveStatus(wave);
  registerWaveAdmin(wave);

  withStore(
    wave
      .command("stop")
      .summary("stop a running wave gracefully: hosts in flight finish, no new one starts")
      .description(
        "Stop a running wave through the maintenance protocol: its agent starts no new\n" +
          "host, the hosts in flight finish, every host's state is recorded, and the\n" +
          "leases are released.",
      )
      .argument("<name>")
      .option("--id <maintenance-id>", "the id the stop is recorded under (default wave-stop-TIME)")
      .option(
        "--drain-timeout <duration>",
        "how long the hosts in flight get (default: the agent's)",
      )
      .option("--wait", "wait until the agent has stopped")
      .option("--timeout <duration>", "with --wait: give up after this long", "1h")
      .option("--json", "JSON output"),
  ).action(
    async (
      name: string,
      flags: {
        id?: string;
        drainTimeout?: string;
        wait?: boolean;
        timeout: string;
        json?: boolean;
        store?: string;
        config?: string;
      },
    ) => {
      validateWaveName(name);
      if (flags.id !== undefined) validateMaintenanceId(flags.id, "--id");
      const drainMs =
        flags.drainTimeout === undefined
          ? null
          : drainTimeout(flags.drainTimeout, "--drain-timeout");
      const timeoutMs = parseDuration(flags.timeout, "--timeout");
      process.exitCode = await withLeases(flags, async (leases) => {
        const r = await stopWave(leases.store, {
          wave: name,
          ...(flags.id !== undefined ? { maintenanceId: flags.id } : {}),
          drainTimeoutMs: drainMs,
          by: operatorName(),
        });
        if (r.status === "never_run" || r.status === "not_running") {
          const message =
            r.status === "never_run" ? r.message : `wave ${name} is not running (${r.message})`;
          if (flags.json) printJson({ wave: name, status: "not_running", message });
          else process.stdout.write(`${message}\n`);
          return Exit.OK;
        }
        if (!flags.json)
          process.stdout.write(
            `stop ${r.status === "repeated" ? "already requested" : "requested"} (${r.runtime.maintenanceId ?? r.runtime.request?.maintenanceId ?? "?"}): the agent starts no new host; the hosts in flight finish\n`,
          );
        if (!flags.wait) {
          if (flags.json) printJson({ wave: name, status: r.status });
          return Exit.OK;
        }
        const w = await waitForWaveStop(leases.store, name, timeoutMs);
        if (flags.json)
          printJson({ wave: name, status: "stopped", state: w.state, reason: w.reason });
        else process.stdout.write(`wave ${name} is ${w.state}${w.reason ? `: ${w.reason}` : ""}\n`);
        return Exit.OK;
      });
    },
  );
}

function readHosts(path: string): string {
  try {
    return readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (e) {
    throw invalidInput(
      `--hosts: cannot read ${path === "-" ? "stdin" : path}: ${(e as Error).message}`,
    );
  }
}
