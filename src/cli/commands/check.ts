import { Option, type Command } from "commander";
import { parseDuration } from "../../domain/duration.js";
import { invalidInput } from "../../domain/errors.js";
import { checkJson, checkPrometheus, checkText, checkUnknown } from "../../ops/check-output.js";
import { CheckStatus, DEFAULT_COLLECTORS, runCheck } from "../../ops/check.js";
import { legacyLockCollector } from "../../ops/audit/legacy-lock-findings.js";
import { onUsageError } from "../exit-codes.js";
import { printJson } from "../output.js";
import { READ_ONLY, withLeases, withStore } from "../context.js";

const DEFAULT_MAX_HOLD_MS = 12 * 3_600_000;
const FORMATS = ["text", "json", "prometheus"];

interface CheckFlags {
  format: string;
  maxHold?: string;
  window: string;
  config?: string;
  store?: string;
  audit?: string[];
}

export function registerCheck(program: Command): void {
  const cmd = withStore(
    program
      .command("check")
      .summary("what blocks or endangers maintenance, worst first (monitoring-plugin exit codes)")
      .description(
        "Everything that blocks or endangers maintenance, worst first:\n" +
          "  CRITICAL  a lease expired and nobody released it; a runtime DRAINING past its deadline\n" +
          "  WARNING   runs in needs_review or suspended; wave hosts in review; halted waves;\n" +
          "            leases held past --max-hold or without expiry; takeovers refused within --window\n" +
          "  UNKNOWN   the store cannot be reached, read, is missing or corrupt; bad arguments\n" +
          "The first line is `QUIESCE STATUS - the worst finding | perfdata`. It only reads the\n" +
          "store (a read-only user will do) and writes no mark: two checks in a row say the same.\n" +
          "Exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN, as monitoring plugins do.",
      )
      .option("--format <format>", "text | json | prometheus", "text")
      .option(
        "--max-hold <duration>",
        "warn about leases held longer than this (default 12h; env QUIESCE_MAX_HOLD)",
      )
      .option("--window <duration>", "report takeovers refused within this window", "24h")
      // Older versions moved a "since the last check" mark; the window replaced it.
      .addOption(new Option("--no-record", "no effect (kept for old cron lines)").hideHelp())
      .option(
        "--audit <paths...>",
        "also warn about stale or unknown legacy locks under these paths (default: audit.paths of quiesce.yaml)",
      ),
  );
  // A monitoring plugin reports its own usage errors as UNKNOWN (3), on stdout, in its format.
  onUsageError(cmd, (message) => {
    const format = formatFrom(process.argv);
    process.stdout.write(checkUnknown(format, `usage: ${message}`));
    return CheckStatus.UNKNOWN;
  });
  cmd.action(async (flags: CheckFlags) => {
    const format = FORMATS.includes(flags.format) ? flags.format : "text";
    try {
      if (format !== flags.format)
        throw invalidInput(`--format: "${flags.format}" is not one of text, json, prometheus`);
      const windowMs = parseDuration(flags.window, "--window");
      process.exitCode = await withLeases(
        flags,
        async (leases, session) => {
          const maxHoldMs = session.config.check.maxHoldMs ?? DEFAULT_MAX_HOLD_MS;
          const audit = legacyLockCollector({
            paths: flags.audit ?? session.config.audit.paths,
            accept: session.config.audit.accept,
          });
          const r = await runCheck(leases.store, { maxHoldMs, windowMs }, [
            ...DEFAULT_COLLECTORS,
            audit,
          ]);
          if (format === "json") printJson(checkJson(r));
          else if (format === "prometheus") process.stdout.write(await checkPrometheus(r));
          else process.stdout.write(checkText(r));
          return r.status;
        },
        READ_ONLY,
      );
    } catch (e) {
      // Never OK, WARNING or CRITICAL about a store it could not read (I12): whatever went
      // wrong (missing, unreachable, corrupt, too new, a bad flag or config), it is UNKNOWN.
      process.stdout.write(checkUnknown(format, (e as Error)?.message ?? String(e)));
      process.exitCode = CheckStatus.UNKNOWN;
    }
  });
}

/** The --format of a command line commander refused (best effort: text otherwise). */
function formatFrom(argv: readonly string[]): string {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = a === "--format" ? argv[i + 1] : a.startsWith("--format=") ? a.slice(9) : undefined;
    if (v !== undefined && FORMATS.includes(v)) return v;
  }
  return "text";
}
