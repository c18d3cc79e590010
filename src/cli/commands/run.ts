import type { Command } from "commander";
import { formatDuration, parseDuration } from "../../domain/duration.js";
import { invalidInput } from "../../domain/errors.js";
import { resolveAcquire } from "../../lease/acquire-options.js";
import { checkRemoteGrace } from "../../domain/remote-grace.js";
import { superviseCommand } from "../../lease/supervise-command.js";
import { loadConfig } from "../../config/resolve-config.js";
import { startupMark } from "../../process/startup-marks.js";
import {
  closeSession,
  openSession,
  say,
  withStore,
  withTakeoverFlags,
  type TakeoverFlags,
} from "../context.js";

interface RunFlags extends TakeoverFlags {
  respect?: string;
  lease?: string;
  ttl: string;
  heartbeat?: string;
  wait: string;
  system?: string;
  note?: string;
  grace: string;
  leaveChildren?: boolean;
  store?: string;
  config?: string;
}

export function registerRun(program: Command): void {
  withTakeoverFlags(
    withStore(
      program
        .command("run")
        .summary("run a command while holding a lease")
        .description(
          "Hold a lease on SCOPE while CMD runs: heartbeat it, hand CMD the fencing token, forward signals,\n" +
            "and release the lease however CMD ends. CMD runs in its own process group.\n\n" +
            "CMD gets QUIESCE_FENCING_TOKEN, QUIESCE_LEASE_SCOPE and QUIESCE_RUN_ID.\n" +
            "Exit: CMD's own code; 75 if the lease could not be obtained (nothing ran);\n" +
            "76 if the lease was lost while CMD ran (CMD was terminated).",
        )
        .option("--lease <scope>", "the scope to hold, e.g. patch:wave or host:db-7 (required)")
        .option("--ttl <duration>", "how long the lease lives without a heartbeat", "30s")
        .option("--heartbeat <duration>", "how often to renew (default: TTL/3)")
        .option("--wait <duration>", "wait this long, in line, if the lease is held", "0s")
        .option(
          "--system <name>",
          "the system holding the lease (default quiesce; env QUIESCE_SYSTEM)",
        )
        .option("--note <text>", "a note shown in lock list/show")
        .option(
          "--grace <duration>",
          "after the lease is lost: SIGTERM, then SIGKILL after this long",
          "10s",
        )
        .option(
          "--leave-children",
          "leave what CMD started in its process group running after CMD exits (daemons started on purpose); they are then outside the lease",
        )
        .argument("<cmd...>", "the command and its arguments (put them after --)")
        .option(
          "--respect <systems>",
          "also wait while these systems (comma-separated) hold a lease on this host",
        )
        .passThroughOptions(),
    ),
  ).action(async (cmd: string[], flags: RunFlags) => {
    // Checked here rather than as a commander requiredOption, so that an unknown flag is
    // reported as such instead of as a missing --lease.
    if (flags.lease === undefined) throw invalidInput("run: --lease SCOPE is required");
    const scope = flags.lease;
    const graceMs = parseDuration(flags.grace, "--grace");
    // Validate everything (scope, durations, system, config) before the store is opened.
    const config = loadConfig(flags);
    const acquire = {
      ttl: parseDuration(flags.ttl, "--ttl"),
      heartbeat:
        flags.heartbeat === undefined ? undefined : parseDuration(flags.heartbeat, "--heartbeat"),
      wait: parseDuration(flags.wait, "--wait"),
      system: config.system,
      note: flags.note,
      respect:
        flags.respect === undefined
          ? undefined
          : flags.respect
              .split(",")
              .map((x) => x.trim())
              .filter(Boolean),
    };
    const timing = resolveAcquire(scope, acquire).timing;
    checkRemoteGrace(config.takeover.remoteGraceMs, graceMs, timing.safetyMarginMs);
    const [command, ...args] = cmd;
    const session = await openSession(flags);
    startupMark("session open");
    const leases = session.leases;
    leases.setKeeperEvents({
      onRenewError: (e) =>
        say(
          `heartbeat failed (${(e as Error).message}); retrying until the lease's local deadline`,
        ),
    });
    let exitCode: number;
    try {
      const r = await superviseCommand(leases, {
        scope,
        command: command!,
        args,
        acquire,
        graceMs,
        leaveChildren: flags.leaveChildren === true,
        onMessage: say,
      });
      switch (r.outcome) {
        case "not_acquired":
          say(
            `lease not obtained${acquire.wait > 0 ? ` within ${formatDuration(acquire.wait)}` : ""}: ${r.refusal.message}`,
          );
          break;
        case "interrupted":
          say(`interrupted by ${r.signal} while waiting for the lease; nothing ran`);
          break;
        case "lease_lost":
          say(`lost the lease on ${scope} (token ${r.token}) while the command ran: ${r.reason}`);
          break;
        case "spawn_failed":
          say(`cannot start ${command}: ${r.error}`);
          break;
        case "internal_error":
          say(`stopped after an internal error: ${r.error}`);
          break;
        case "completed":
          break;
      }
      exitCode = r.exitCode;
    } finally {
      // process.exit follows at once: SQLite may leave its log for the next run (Store.close).
      await closeSession(session, { processExits: true });
      startupMark("store closed");
    }
    process.exit(exitCode);
  });
}
