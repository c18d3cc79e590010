import type { Command } from "commander";
import { parseDuration } from "../../domain/duration.js";
import { operatorName } from "../../journal/inspect.js";
import { pruneStore } from "../../ops/prune.js";
import { printJson } from "../output.js";
import { READ_ONLY, withLeases, withStore, type SessionOptions } from "../context.js";

export function registerStore(program: Command): void {
  const store = program.command("store").summary("inspect or migrate the store");
  const info = (mode: SessionOptions) => async (flags: { json?: boolean; store?: string }) => {
    await withLeases(
      flags,
      async (leases) => {
        const i = await leases.store.info();
        if (flags.json) {
          printJson(i);
          return;
        }
        const rows: [string, string][] = [
          ["backend", i.backend],
          ["location", i.location],
          ["schema", `${i.schemaVersion} (this quiesce: ${i.latestSchemaVersion})`],
          ["store id", i.storeId],
          ...Object.entries(i.settings),
        ];
        const w = Math.max(...rows.map((r) => r[0].length));
        process.stdout.write(rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join("\n") + "\n");
      },
      mode,
    );
  };
  withStore(
    store
      .command("info")
      .description("backend, location, schema version, settings")
      .option("--json", "JSON output"),
  ).action(info(READ_ONLY));
  withStore(
    store
      .command("migrate")
      .description("create or upgrade the schema now (every command does it on first use)")
      .option("--json", "JSON output"),
  ).action(info({}));
  withStore(
    store
      .command("prune")
      .summary("delete finished runs, completed waves and events older than --older-than")
      .description(
        "Delete runs that completed or failed (with their effects), completed\n" +
          "waves (with their hosts) and events older than --older-than on the\n" +
          "store's clock, in one commit, and say how much went (a store.pruned\n" +
          "event records it). Runs in review or suspended, halted or stopped waves\n" +
          "and leases are kept whatever their age.",
      )
      .requiredOption("--older-than <duration>", "e.g. 90d, 30d, 12h")
      .option("--json", "JSON output"),
  ).action(async (flags: { olderThan: string; json?: boolean; store?: string }) => {
    const olderThanMs = parseDuration(flags.olderThan, "--older-than");
    await withLeases(flags, async (leases) => {
      const r = await pruneStore(leases.store, { olderThanMs, by: operatorName() });
      if (flags.json)
        printJson({
          runs: r.runs,
          effects: r.effects,
          waves: r.waves,
          events: r.events,
          olderThanMs: r.olderThanMs,
          before: new Date(r.before).toISOString(),
        });
      else process.stdout.write(`${r.message}\n`);
    });
  });
}
