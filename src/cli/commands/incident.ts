import type { Command } from "commander";
import { invalidInput } from "../../domain/errors.js";
import { validateScope } from "../../domain/names.js";
import { gatherIncident, renderIncident } from "../../ops/incident.js";
import { printJson } from "../output.js";
import { withLeases, withStore, READ_ONLY } from "../context.js";

export function registerIncident(program: Command): void {
  withStore(
    program
      .command("incident")
      .summary("the markdown incident record of a scope or a run")
      .description(
        "print the timeline of a scope (or a run id) as a markdown incident record: who held it, when it\n" +
          "went stale, the evidence, who took it over or broke it, and why",
      )
      .argument("<scope-or-run>")
      .option("--json", "the gathered facts as JSON instead of markdown"),
  ).action(async (subject: string, flags: { json?: boolean; store?: string }) => {
    if (!subject.startsWith("r-")) validateScope(subject, "scope");
    await withLeases(
      flags,
      async (leases) => {
        const i = await gatherIncident(leases.store, subject);
        if (i.events.length === 0 && i.lease === null)
          throw invalidInput(`nothing is recorded for ${subject}`);
        if (flags.json) printJson(i);
        else process.stdout.write(renderIncident(i));
      },
      READ_ONLY,
    );
  });
}
