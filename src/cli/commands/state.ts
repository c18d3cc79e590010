import type { Command } from "commander";
import { invalidInput } from "../../domain/errors.js";
import { parseToken, validateScope } from "../../domain/names.js";
import { iso, printJson, table } from "../output.js";
import { withLeases, withStore, READ_ONLY } from "../context.js";

const KEY = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/;
const MAX_VALUE = 64 * 1024;

/** Fenced key/value state: lets a wrapped script record progress that a zombie cannot overwrite. */
export function registerState(program: Command): void {
  const state = program
    .command("state")
    .summary("small key/value state written under a lease, fenced by its token")
    .description(
      "Small key/value state kept per scope. Writes are fenced: they succeed only while --token is the\n" +
        "scope's current, unexpired lease (exit 76 otherwise), so a holder that lost its lease cannot\n" +
        'overwrite its successor\'s progress. In a `quiesce run` command: --token "$QUIESCE_FENCING_TOKEN".',
    );

  withStore(
    state
      .command("set")
      .description("write KEY=VALUE under the lease (exit 76 if the token is no longer current)")
      .argument("<scope>")
      .argument("<key>")
      .argument("<value>")
      .requiredOption("--token <n>", "the lease's fencing token"),
  ).action(
    async (scope: string, key: string, value: string, flags: { token: string; store?: string }) => {
      validateScope(scope, "scope");
      if (!KEY.test(key))
        throw invalidInput(
          `key: "${key}" is not a valid key (letters, digits, . _ : / -; at most 200)`,
        );
      if (value.length > MAX_VALUE)
        throw invalidInput(`value: ${value.length} characters; the limit is ${MAX_VALUE}`);
      const token = parseToken(flags.token);
      await withLeases(flags, (leases) => leases.putStateByToken(scope, token, key, value));
    },
  );

  withStore(
    state
      .command("get")
      .description("print the scope's state (one key's value, or every key)")
      .argument("<scope>")
      .argument("[key]")
      .option("--json", "JSON output"),
  ).action(
    async (scope: string, key: string | undefined, flags: { json?: boolean; store?: string }) => {
      validateScope(scope, "scope");
      await withLeases(
        flags,
        async (leases) => {
          const entries = (await leases.store.leases.getState(scope)).filter(
            (e) => key === undefined || e.key === key,
          );
          if (key !== undefined && entries.length === 0)
            throw invalidInput(`${scope} has no state key "${key}"`);
          if (flags.json) printJson(entries.map((e) => ({ ...e, updatedAt: iso(e.updatedAt) })));
          else if (key !== undefined) process.stdout.write(`${entries[0]!.value}\n`);
          else
            process.stdout.write(
              table(
                ["KEY", "TOKEN", "UPDATED", "VALUE"],
                entries.map((e) => [e.key, String(e.token), iso(e.updatedAt), e.value]),
              ),
            );
        },
        READ_ONLY,
      );
    },
  );
}
