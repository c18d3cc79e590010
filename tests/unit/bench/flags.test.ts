import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";

// benchFlags ends the process on --help and on a bad command line, so each case runs in a
// child: a bench given a mistyped flag must stop, not run minutes with the defaults.
const FLAGS = new URL("../../../bench/lib/flags.js", import.meta.url).href;

function parse(...argv: string[]) {
  const script = `import { benchFlags } from ${JSON.stringify(FLAGS)};
const f = benchFlags("usage: b [--n N] [--backend B]", ["--n", "--backend"], process.argv.slice(1));
process.stdout.write(JSON.stringify({ n: f("--n") ?? null, backend: f("--backend") ?? null }));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script, "--", ...argv], {
    encoding: "utf8",
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test("known flags give their values, absent ones nothing", () => {
  const r = parse("--backend=postgres");
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(JSON.parse(r.out), { n: null, backend: "postgres" });
});

test("--help prints the usage and exits 0", () => {
  const r = parse("--n", "3", "--help");
  assert.equal(r.code, 0);
  assert.match(r.out, /^usage: b \[--n N\]/);
});

test("an unknown flag, a missing value or a stray word is refused with the usage", () => {
  for (const [argv, why] of [
    [["--backnd", "postgres"], /Unknown option '--backnd'/],
    [["--n"], /Option '--n <value>' argument missing/],
    [["--n", "--backend", "sqlite"], /Option '--n' argument is ambiguous/],
    [["postgres"], /Unexpected argument 'postgres'/],
  ] as const) {
    const r = parse(...argv);
    assert.equal(r.code, 2, JSON.stringify(argv));
    assert.match(r.err, why);
    assert.match(r.err, /usage: b/);
  }
});
