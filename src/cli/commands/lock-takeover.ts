import type { Command } from "commander";
import { parseDuration } from "../../domain/duration.js";
import { invalidInput } from "../../domain/errors.js";
import { validateScope } from "../../domain/names.js";
import type { TakeoverDecision } from "../../domain/takeover-policy.js";
import { resolveAcquire } from "../../lease/acquire-options.js";
import { breakLease } from "../../lease/break-lease.js";
import { reconcileExpired } from "../../lease/reconcile.js";
import { Exit } from "../exit-codes.js";
import { printJson, table } from "../output.js";
import { say, withLeases, withStore, withTakeoverFlags, type TakeoverFlags } from "../context.js";

function decisionText(d: TakeoverDecision): string {
  const head =
    d.action === "take_over"
      ? `decision  take over (${d.basis.replace("_", " ")})`
      : `decision  refuse (${d.reason.replace("_", " ")})`;
  const probes = table(
    ["PROBE", "VERDICT", "EVIDENCE"],
    d.probes.map((p) => [p.probe, p.verdict, p.evidence]),
  );
  return `${head}\nwhy       ${d.summary}\n\n${probes}`;
}

interface TakeoverCliFlags extends TakeoverFlags {
  dryRun?: boolean;
  hold?: boolean;
  ttl: string;
  system?: string;
  allExpired?: boolean;
  prefix?: string;
  json?: boolean;
  store?: string;
}

export function registerLockTakeover(lock: Command): void {
  withTakeoverFlags(
    withStore(
      lock
        .command("takeover")
        .summary("prove an expired lease's owner dead and take it over (--dry-run explains)")
        .description(
          "run the proof of death on an expired lease now and take it over if it passes; by default the\n" +
            "taken-over lease is released again at once (the scope is free); --hold keeps it and prints its token.\n" +
            "--all-expired sweeps every expired lease (optionally under --prefix) the same way.",
        )
        .argument("[scope]")
        .option("--dry-run", "explain what would be decided and why; change nothing")
        .option("--hold", "keep the taken-over lease (print its token) instead of releasing it")
        .option("--ttl <duration>", "TTL of the held lease (with --hold)", "30s")
        .option("--system <name>", "the system taking over: only its own leases (default quiesce)")
        .option("--all-expired", "sweep every expired lease")
        .option(
          "--prefix <prefix>",
          "with --all-expired: only scopes starting with this, e.g. host:",
        )
        .option("--json", "JSON output"),
    ),
  ).action(async (scope: string | undefined, flags: TakeoverCliFlags) => {
    const ttl = parseDuration(flags.ttl, "--ttl");
    if (flags.allExpired && scope !== undefined)
      throw invalidInput("lock takeover: give a scope or --all-expired, not both");
    if (!flags.allExpired && scope === undefined)
      throw invalidInput("lock takeover: name the scope (or --all-expired)");
    await withLeases(flags, async (leases, session) => {
      const req = resolveAcquire(scope ?? "sweep", {
        ttl,
        system: session.config.system,
        pid: null,
        keepAlive: false,
      });
      if (flags.allExpired) {
        const report = await reconcileExpired(leases, {
          prefix: flags.prefix ?? "",
          owner: req.owner,
          dryRun: flags.dryRun,
        });
        if (flags.json) printJson(report);
        else if (report.length === 0) process.stdout.write("no expired leases\n");
        else
          process.stdout.write(
            table(
              ["SCOPE", "TOKEN", "OUTCOME", "WHY"],
              report.map((e) => [
                e.scope,
                String(e.token),
                e.cleared ? "taken over, cleared" : e.attempt.outcome.replaceAll("_", " "),
                "decision" in e.attempt ? e.attempt.decision.summary : "",
              ]),
            ),
          );
        if (report.some((e) => e.attempt.outcome === "refused"))
          process.exitCode = Exit.LEASE_UNAVAILABLE;
        return;
      }
      validateScope(scope!, "scope");
      const t = await leases.takeoverProcedure().attempt({
        scope: scope!,
        owner: req.owner,
        ttlMs: ttl,
        ticket: null,
        dryRun: flags.dryRun,
      });
      if (flags.json) printJson(t);
      switch (t.outcome) {
        case "free":
          if (!flags.json) process.stdout.write(`${scope} is free; nothing to take over\n`);
          return;
        case "would_take_over":
        case "refused":
          if (!flags.json) process.stdout.write(decisionText(t.decision));
          if (t.outcome === "refused" && !flags.dryRun) process.exitCode = Exit.LEASE_UNAVAILABLE;
          return;
        case "lost_race":
        case "queued":
          if (!flags.json)
            say(
              `another agent got there first; ${scope} is now token ${t.current?.token ?? "?"} of run ${t.current?.owner.runId ?? "?"}`,
            );
          process.exitCode = Exit.LEASE_UNAVAILABLE;
          return;
        case "taken":
          if (flags.hold) {
            if (!flags.json) process.stdout.write(`${t.lease.token}\n`);
            say(`took over ${scope}: ${t.decision.summary}`);
            return;
          }
          await leases.releaseByToken(scope!, t.lease.token, "cleared by `quiesce lock takeover`");
          if (!flags.json)
            process.stdout.write(
              `took over ${scope} (token ${t.lease.token}) and released it: ${t.decision.summary}\n`,
            );
      }
    });
  });

  withTakeoverFlags(
    withStore(
      lock
        .command("break")
        .summary("the documented manual release of a stuck lease, with an incident record")
        .description(
          "release a stuck lease by hand, the documented way: the same no-owner checks as a takeover run\n" +
            "first; the lease's full contents, the operator and the reason are written as an incident event,\n" +
            "and only then is the lease released. Refuses while any probe says the owner is alive.",
        )
        .argument("<scope>")
        .option("--reason <text>", "why (required; it goes into the incident record)")
        .option("--operator <name>", "who is breaking it (default: the login name)")
        .option("--force", "go ahead when death is UNKNOWN (never when alive); recorded")
        .option("--foreign", "break another system's lease; coordinate with it first; recorded")
        .option("--dry-run", "explain what would be decided and why; change nothing")
        .option("--json", "JSON output"),
    ),
  ).action(
    async (
      scope: string,
      flags: TakeoverFlags & {
        reason?: string;
        operator?: string;
        force?: boolean;
        foreign?: boolean;
        dryRun?: boolean;
        json?: boolean;
        store?: string;
      },
    ) => {
      if (flags.reason === undefined)
        throw invalidInput(
          "lock break: --reason TEXT is required (it goes into the incident record)",
        );
      await withLeases(flags, async (leases) => {
        const r = await breakLease(leases, scope, {
          reason: flags.reason!,
          operator: flags.operator,
          force: flags.force,
          foreign: flags.foreign,
          dryRun: flags.dryRun,
        });
        if (flags.json) printJson(r);
        switch (r.outcome) {
          case "free":
            if (!flags.json) process.stdout.write(`${scope} is free; nothing to break\n`);
            return;
          case "refused":
          case "would_break":
            if (!flags.json) process.stdout.write(decisionText(r.decision));
            if (r.outcome === "refused") {
              say(
                r.decision.action === "refuse" && r.decision.reason === "death_unproven"
                  ? "not broken: death is unproven (--force overrides UNKNOWN, never ALIVE)"
                  : r.decision.action === "refuse" && r.decision.reason === "foreign"
                    ? "not broken: another system's lease (--foreign, after coordinating with it)"
                    : "not broken",
              );
              process.exitCode = Exit.LEASE_UNAVAILABLE;
            }
            return;
          case "changed":
            say(
              `the lease changed while it was being broken (now token ${r.current?.token ?? "none"}); the incident is recorded, nothing was released`,
            );
            process.exitCode = Exit.LEASE_UNAVAILABLE;
            return;
          case "broken":
            if (!flags.json)
              process.stdout.write(
                `broke ${scope} (token ${r.lease.token} of run ${r.lease.owner.runId}); incident recorded: quiesce incident ${scope}\n`,
              );
        }
      });
    },
  );
}
