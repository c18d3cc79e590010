import type { Command } from "commander";
import { invalidInput, isQuiesceError } from "../../domain/errors.js";
import { checkPrometheus, checkText } from "../../ops/check-output.js";
import { CheckStatus, runCheck } from "../../ops/check.js";
import { legacyLockFindings } from "../../ops/audit/legacy-lock-findings.js";
import { printJson } from "../output.js";
import { withLeases, withStore } from "../context.js";

const DEFAULT_MAX_HOLD_MS = 12 * 3_600_000;

interface CheckFlags {
  format: string;
  maxHold?: string;
  config?: string;
  record: boolean;
  store?: string;
  audit?: string[];
}

export function registerCheck(program: Command): void {
  withStore(
    program
      .command("check")
      .summary("find stale leases before they block work (monitoring-plugin exit codes)")
      .description(
        "find stale leases before they block work: expired (CRITICAL), held longer than --max-hold,\n" +
          "without expiry, takeovers refused since the last check (WARNING).\n" +
          "Exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (store unreachable), as monitoring plugins do.",
      )
      .option("--format <format>", "text | json | prometheus", "text")
      .option(
        "--max-hold <duration>",
        "warn about leases held longer than this (default 12h; env QUIESCE_MAX_HOLD)",
      )
      .option("--no-record", "do not move the 'since the last check' mark")
      .option(
        "--audit <paths...>",
        "also warn about stale or unknown legacy locks under these paths (default: audit.paths of quiesce.yaml)",
      ),
  ).action(async (flags: CheckFlags) => {
    if (!["text", "json", "prometheus"].includes(flags.format)) {
      throw invalidInput(`--format: "${flags.format}" is not one of text, json, prometheus`);
    }
    let status: number;
    try {
      status = await withLeases(flags, async (leases, session) => {
        const maxHoldMs = session.config.check.maxHoldMs ?? DEFAULT_MAX_HOLD_MS;
        const extraFindings = await legacyLockFindings({
          paths: flags.audit ?? session.config.audit.paths,
          accept: session.config.audit.accept,
        });
        const r = await runCheck(leases.store, { maxHoldMs, record: flags.record, extraFindings });
        if (flags.format === "json") printJson(r);
        else if (flags.format === "prometheus") process.stdout.write(await checkPrometheus(r));
        else process.stdout.write(checkText(r));
        return r.status;
      });
    } catch (e) {
      if (!isQuiesceError(e, "STORE_UNAVAILABLE")) throw e;
      const msg = e.message;
      if (flags.format === "json") printJson({ status: CheckStatus.UNKNOWN, error: msg });
      else if (flags.format === "prometheus")
        process.stdout.write(`# ${msg}\nquiesce_check_status 3\n`);
      else process.stdout.write(`QUIESCE UNKNOWN - ${msg}\n`);
      status = CheckStatus.UNKNOWN;
    }
    process.exitCode = status;
  });
}
