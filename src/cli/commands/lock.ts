import type { Command } from "commander";
import { invalidInput } from "../../domain/errors.js";
import { parseDuration } from "../../domain/duration.js";
import { validateScope, parseToken } from "../../domain/names.js";
import { Exit } from "../exit-codes.js";
import { iso, leaseDetails, leaseJson, leaseTable, printJson } from "../output.js";
import {
  say,
  withLeases,
  withStore,
  withTakeoverFlags,
  type TakeoverFlags,
  READ_ONLY,
} from "../context.js";
import { callingProcess } from "../../lease/caller-process.js";
import { registerLockTakeover } from "./lock-takeover.js";

export function registerLock(program: Command): void {
  const lock = program
    .command("lock")
    .summary("inspect leases, or hold one across commands")
    .description(
      "Inspect leases, or hold one across several commands (scripts, other systems' jobs).",
    );

  withStore(
    lock
      .command("list")
      .description("every held lease, live or expired")
      .option("--json", "JSON output"),
  ).action(async (flags: { json?: boolean; store?: string }) => {
    await withLeases(
      flags,
      async (leases) => {
        const { leases: all, now } = await leases.list();
        if (flags.json)
          printJson({ storeNow: iso(now), leases: all.map((l) => leaseJson(l, now)) });
        else if (all.length === 0) process.stdout.write("no leases held\n");
        else process.stdout.write(leaseTable(all, now));
      },
      READ_ONLY,
    );
  });

  withStore(
    lock
      .command("show")
      .description("one lease in full")
      .argument("<scope>")
      .option("--json", "JSON output"),
  ).action(async (scope: string, flags: { json?: boolean; store?: string }) => {
    validateScope(scope, "scope");
    await withLeases(
      flags,
      async (leases) => {
        const { lease, now } = await leases.get(scope);
        if (flags.json)
          printJson(
            lease
              ? { held: true, ...leaseJson(lease, now) }
              : { scope, held: false, storeNow: iso(now) },
          );
        else if (!lease) process.stdout.write(`${scope} is free\n`);
        else process.stdout.write(leaseDetails(lease, now));
      },
      READ_ONLY,
    );
  });

  withTakeoverFlags(
    withStore(
      lock
        .command("acquire")
        .summary("take a lease and print its token, for scripts and other systems")
        .description(
          "take a lease and print its fencing token (exit 75 if it is held); it is not renewed:\n" +
            "renew it with `lock renew` more often than --ttl, release it with `lock release`",
        )
        .argument("<scope>")
        .requiredOption("--ttl <duration>", "how long the lease lives without a renewal")
        .option("--wait <duration>", "wait this long, in line, if the lease is held", "0s")
        .option(
          "--system <name>",
          "the system holding the lease: backup, hypervisor, ... (default quiesce; env QUIESCE_SYSTEM)",
        )
        .option("--note <text>", "a note shown in lock list/show")
        .option(
          "--owner-pid <pid>",
          "the process that holds the lease (default: the calling script's shell, our parent; 'none': no process)",
        )
        .option("--json", "print the whole lease as JSON instead of the token"),
    ),
  ).action(
    async (
      scope: string,
      flags: {
        ttl: string;
        wait: string;
        system?: string;
        note?: string;
        ownerPid?: string;
        json?: boolean;
        store?: string;
      } & TakeoverFlags,
    ) => {
      // By default the calling script owns the lease: once it is gone (crashed, killed), a
      // takeover finds the owner dead on this host instead of waiting for a human.
      const pid =
        flags.ownerPid === undefined
          ? callingProcess()
          : flags.ownerPid === "none"
            ? null
            : Number(flags.ownerPid);
      if (pid !== null && !(Number.isInteger(pid) && pid > 0)) {
        throw invalidInput(`--owner-pid: "${flags.ownerPid}" is not a process id`);
      }
      const ttl = parseDuration(flags.ttl, "--ttl");
      const wait = parseDuration(flags.wait, "--wait");
      await withLeases(flags, async (leases, session) => {
        const lease = await leases.acquire(scope, {
          ttl,
          wait,
          system: session.config.system,
          note: flags.note,
          pid,
          keepAlive: false,
          onWait: (p) => say(`waiting for ${p.scope}: ${p.message}`),
        });
        if (flags.json) printJson(leaseJson(lease.record, lease.record.acquiredAt));
        else process.stdout.write(`${lease.token}\n`);
      });
    },
  );

  withStore(
    lock
      .command("renew")
      .description("renew a lease held across commands (exit 76 if the token is no longer current)")
      .argument("<scope>")
      .requiredOption("--token <n>", "the fencing token `lock acquire` printed")
      .option("--ttl <duration>", "new TTL (default: the lease's own)")
      .option("--json", "print the renewed lease as JSON"),
  ).action(
    async (
      scope: string,
      flags: { token: string; ttl?: string; json?: boolean; store?: string },
    ) => {
      const token = parseToken(flags.token);
      const ttl = flags.ttl === undefined ? undefined : parseDuration(flags.ttl, "--ttl");
      await withLeases(flags, async (leases) => {
        const lease = await leases.renewByToken(scope, token, ttl);
        if (flags.json) printJson(leaseJson(lease, lease.heartbeatAt));
        else
          process.stdout.write(`renewed ${scope} (token ${token}) until ${iso(lease.expiresAt)}\n`);
      });
    },
  );

  withStore(
    lock
      .command("release")
      .description(
        "release a lease held across commands (exit 76 if the token is no longer current)",
      )
      .argument("<scope>")
      .requiredOption("--token <n>", "the fencing token `lock acquire` printed")
      .option("--reason <text>", "why, for the event log", "released by `quiesce lock release`"),
  ).action(async (scope: string, flags: { token: string; reason: string; store?: string }) => {
    const token = parseToken(flags.token);
    await withLeases(flags, (leases) =>
      leases.releaseByToken(scope, token, flags.reason, { pid: process.ppid }),
    );
  });

  registerLockTakeover(lock);

  lock.addHelpText(
    "after",
    `\nExit codes: 0 ok, 1 store failure, 2 bad input, ${Exit.LEASE_UNAVAILABLE} lease held, ${Exit.LEASE_LOST} token no longer current.`,
  );
}
