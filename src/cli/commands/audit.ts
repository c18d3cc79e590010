import type { Command } from "commander";
import { loadConfig } from "../../config/resolve-config.js";
import { runAudit } from "../../ops/audit/audit.js";
import { auditJson, auditText } from "../../ops/audit/audit-output.js";
import { printJson, table } from "../output.js";

/** `quiesce audit [PATH...]`: the inventory of legacy locks and lock idioms. */
export function registerAudit(program: Command): void {
  program
    .command("audit")
    .summary("inventory legacy lock files, pid files, flags and lock idioms in scripts")
    .description(
      "Inventory what quiesce replaces: lock files (*.lock, *.lck, LOCK), pid\n" +
        "files, maintenance flags (*maintenance*, *.flag) and mkdir-style lock\n" +
        "directories, each judged live, stale or unknown with its evidence (the\n" +
        "pid inside, /proc/locks); and the lock idioms in shell scripts, crontabs\n" +
        "and systemd units, each with the `quiesce run --lease` line that\n" +
        "replaces it. Without PATH: /run, /var/run, /var/lock, /run/lock, /tmp\n" +
        "(top level), /etc/cron.d, /etc/systemd/system and audit.paths of\n" +
        "quiesce.yaml; audit.accept there (path + reason) documents a known lock.\n" +
        "Reads only the first bytes of a file, never follows a symlink, and notes\n" +
        "what it cannot read.\n" +
        "Exit 0 every lock live or accepted, 1 some stale or unknown, 2 bad input.",
    )
    .argument("[paths...]", "files or directories to audit instead of the default roots")
    .option("--json", "print { locks, idioms, notes } as JSON")
    .option(
      "--config <file>",
      "quiesce.yaml to read (env QUIESCE_CONFIG; default /etc/quiesce/quiesce.yaml for root)",
    )
    .action(async (paths: string[], flags: { json?: boolean; config?: string }) => {
      const config = loadConfig(flags);
      const r = await runAudit({
        paths,
        configPaths: config.audit.paths,
        accept: config.audit.accept,
      });
      if (flags.json) printJson(auditJson(r));
      else process.stdout.write(auditText(r, table));
      process.exitCode = r.exitCode;
    });
}
