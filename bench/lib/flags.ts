import { parseArgs } from "node:util";

/**
 * A bench's command line: `--NAME VALUE` (or `--NAME=VALUE`) flags only, read by node's own
 * util.parseArgs in strict mode. `--help` prints the usage and exits 0; a flag the bench does
 * not know, a flag without its value, or a stray word prints why and the usage and exits 2.
 * Ignoring them would run minutes of benchmark with the defaults (a mistyped
 * `--backnd postgres` measured both stores).
 */
export function benchFlags(
  usage: string,
  names: readonly string[],
  argv: readonly string[] = process.argv.slice(2),
): (name: string) => string | undefined {
  const options = Object.fromEntries(
    names.map((n) => [n.replace(/^--/, ""), { type: "string" as const }]),
  );
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      options: { ...options, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${usage}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  return (name) => {
    const v = values[name.replace(/^--/, "")];
    return typeof v === "string" ? v : undefined;
  };
}
