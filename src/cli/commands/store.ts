import type { Command } from "commander";
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
}
