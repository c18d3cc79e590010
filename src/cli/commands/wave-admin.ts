import type { Command } from "commander";
import { operatorName } from "../../journal/inspect.js";
import { deleteWave, retryWave } from "../../wave/wave-admin.js";
import { printJson } from "../output.js";
import { withLeases, withStore } from "../context.js";

interface Flags {
  json?: boolean;
  store?: string;
  config?: string;
}

/** `quiesce wave retry|delete`: operator actions on a wave no agent is running. */
export function registerWaveAdmin(wave: Command): void {
  withStore(
    wave
      .command("retry")
      .summary("put failed hosts back to pending (the next wave run patches them again)")
      .description(
        "Put failed hosts back to pending, recorded as a wave.retried event; their\n" +
          "journal runs are dropped so the next `wave run` patches them afresh. A\n" +
          "completed wave becomes stopped. Refused (exit 75) while an agent runs\n" +
          "the wave: stop it first.",
      )
      .argument("<name>")
      .option("--hosts <hosts...>", "failed (every failed host) or the hosts to retry", ["failed"])
      .option("--json", "JSON output"),
  ).action(async (name: string, flags: Flags & { hosts: string[] }) => {
    const hosts =
      flags.hosts.length === 1 && flags.hosts[0] === "failed" ? ("failed" as const) : flags.hosts;
    await withLeases(flags, async (leases) => {
      const r = await retryWave(leases.store, { wave: name, hosts, by: operatorName() });
      if (flags.json) printJson(r);
      else process.stdout.write(`${r.message}\n`);
    });
  });

  withStore(
    wave
      .command("delete")
      .summary("delete a wave, its hosts and their journal runs (refused while it runs)")
      .description(
        "Delete a wave with its hosts, their journal runs and its agent's runtime\n" +
          "record, recorded as a wave.deleted event. Refused (exit 75) while an\n" +
          "agent runs the wave.",
      )
      .argument("<name>")
      .option("--json", "JSON output"),
  ).action(async (name: string, flags: Flags) => {
    await withLeases(flags, async (leases) => {
      const r = await deleteWave(leases.store, { wave: name, by: operatorName() });
      if (flags.json) printJson(r);
      else process.stdout.write(`${r.message}\n`);
    });
  });
}
