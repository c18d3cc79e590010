import type { Command } from "commander";
import { parseDuration } from "../../domain/duration.js";
import { invalidInput } from "../../domain/errors.js";
import { validateScope } from "../../domain/names.js";
import { sleep } from "../../process/clock.js";
import { eventLine, jsonText } from "../output.js";
import { onStdoutClosed } from "../stdout-pipe.js";
import { withLeases, withStore, READ_ONLY } from "../context.js";

interface EventFlags {
  scope?: string;
  since?: string;
  limit: string;
  follow?: boolean;
  json?: boolean;
  store?: string;
}

export function registerEvents(program: Command): void {
  withStore(
    program
      .command("events")
      .description("the log of lease acquisitions, releases, renewal failures, expiries and losses")
      .option("--scope <scope>", "only this scope")
      .option("--since <duration>", "only events younger than this, e.g. 1h")
      .option("--limit <n>", "at most this many (the newest)", "200")
      .option("-f, --follow", "keep printing new events until interrupted")
      .option("--json", "one JSON object per line"),
  ).action(async (flags: EventFlags) => {
    if (flags.scope !== undefined) validateScope(flags.scope, "--scope");
    const sinceMs = flags.since === undefined ? undefined : parseDuration(flags.since, "--since");
    const limit = Number(flags.limit);
    if (!Number.isInteger(limit) || limit < 1)
      throw invalidInput(`--limit: "${flags.limit}" is not a positive integer`);
    await withLeases(
      flags,
      async (leases) => {
        const since = sinceMs === undefined ? undefined : (await leases.store.now()) - sinceMs;
        let afterId = 0;
        const print = (rows: Awaited<ReturnType<typeof leases.events>>) => {
          for (const e of rows) {
            afterId = Math.max(afterId, e.id);
            process.stdout.write(flags.json ? jsonText(e) + "\n" : eventLine(e) + "\n");
          }
        };
        print(await leases.events({ scope: flags.scope, since, limit }));
        if (!flags.follow) return;
        const stop = new AbortController();
        process.once("SIGINT", () => stop.abort());
        process.once("SIGTERM", () => stop.abort());
        onStdoutClosed(() => stop.abort()); // `events --follow | head`: nobody reads any more
        while (!stop.signal.aborted) {
          await sleep(500, stop.signal).catch(() => undefined);
          if (!stop.signal.aborted)
            print(await leases.events({ scope: flags.scope, afterId, limit: 10_000 }));
        }
      },
      READ_ONLY,
    );
  });
}
