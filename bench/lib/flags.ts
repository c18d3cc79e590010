/**
 * A bench's command line: `--NAME VALUE` flags only. `--help` prints the usage and exits 0; a
 * flag the bench does not know, a flag without its value, or a stray word prints why and the
 * usage and exits 2. Ignoring them would run minutes of benchmark with the defaults (a
 * mistyped `--backnd postgres` measured both stores).
 */
export function benchFlags(
  usage: string,
  names: readonly string[],
  argv: readonly string[] = process.argv.slice(2),
): (name: string) => string | undefined {
  const refuse = (why: string): never => {
    process.stderr.write(`${why}\n${usage}\n`);
    process.exit(2);
  };
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i]!;
    const value = argv[i + 1];
    if (!names.includes(name)) refuse(`unexpected argument ${name}`);
    if (value === undefined || value.startsWith("--")) refuse(`${name} needs a value`);
    values.set(name, value!);
  }
  return (name) => values.get(name);
}
