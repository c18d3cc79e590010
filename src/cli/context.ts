import type { Command } from "commander";
import { Leases } from "../lease/leases.js";
import { openStore } from "../store/open-store.js";

/** Every command that touches the store takes --store (else QUIESCE_STORE, else the default). */
export function withStore(cmd: Command): Command {
  return cmd.option(
    "--store <url>",
    "store: a file path, sqlite:PATH or postgres://... (env QUIESCE_STORE)",
  );
}

export async function openLeasesFor(opts: { store?: string }): Promise<Leases> {
  return new Leases(await openStore(opts.store));
}

/** Opens, runs `fn`, always closes. */
export async function withLeases<T>(
  opts: { store?: string },
  fn: (leases: Leases) => Promise<T>,
): Promise<T> {
  const leases = await openLeasesFor(opts);
  try {
    return await fn(leases);
  } finally {
    await leases.close().catch(() => undefined);
  }
}

export function say(line: string): void {
  process.stderr.write(`quiesce: ${line}\n`);
}
