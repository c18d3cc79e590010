import Database from "better-sqlite3";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { defaultSqlitePath } from "../../src/store/open-store.js";
import { defaultWaveLogDir } from "../../src/wave/log-dir.js";
import { cli } from "../support/cli.js";
import { CLI, tempDir } from "../support/paths.js";
import { pgSchemaUrl } from "../support/pg.js";

/** What a new user trips on first (issue 9, section 4). */

test("bare `quiesce` and every command group print their help on stdout, exit 0", async () => {
  const bare = await cli([]);
  assert.equal(bare.code, 0, bare.stderr);
  assert.match(bare.stdout, /^Usage: quiesce \[options\] \[command\]/);
  assert.match(bare.stdout, /\n {2}check\b/);
  for (const group of ["lock", "wave", "runs", "maintenance", "store", "state"]) {
    const r = await cli([group]);
    assert.equal(r.code, 0, `${group}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^Usage: quiesce ${group} \\[options\\] \\[command\\]`));
    assert.equal(r.stderr, "");
  }
  const typo = await cli(["lok"]);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /unknown command 'lok'.*\(Did you mean lock\?\)/);
});

test("--version and -V print the package's version, the one the CLI's own --version prints", async () => {
  const { version } = JSON.parse(
    readFileSync(join(dirname(CLI), "..", "package.json"), "utf8"),
  ) as {
    version: string;
  };
  for (const flag of ["--version", "-V"]) {
    const r = await cli([flag]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${version}\n`);
  }
  // With anything else on the line the bundled CLI answers (commander's --version): same text.
  const viaCli = await cli(["--version", "--store", "/nonexistent/x.db"]);
  assert.equal(viaCli.stdout, `${version}\n`, viaCli.stderr);
});

test("--store (and --config) before the subcommand: `quiesce --store URL store info`", async () => {
  const t = tempDir("quiesce-global-store-");
  try {
    const a = join(t.dir, "a.db");
    const b = join(t.dir, "b.db");
    assert.equal((await cli(["--store", a, "lock", "acquire", "x", "--ttl", "1m"])).code, 0);
    assert.ok(existsSync(a));
    const info = await cli(["--store", a, "store", "info", "--json"]);
    assert.equal(info.code, 0, info.stderr);
    assert.equal((JSON.parse(info.stdout) as { location: string }).location, a);
    // The subcommand's own --store wins over the one before it.
    const own = await cli(["--store", a, "lock", "list", "--store", b]);
    assert.equal(own.code, 1);
    assert.match(own.stderr, /no quiesce store at .*b\.db/);
    const cfg = join(t.dir, "quiesce.yaml");
    writeFileSync(cfg, `store: ${a}\n`);
    const viaConfig = await cli(["--config", cfg, "lock", "list", "--json"]);
    assert.equal(viaConfig.code, 0, viaConfig.stderr);
    assert.equal((JSON.parse(viaConfig.stdout) as { leases: unknown[] }).leases.length, 1);
  } finally {
    t.cleanup();
  }
});

test("`events --json | head -1` exits quietly: no EPIPE error", () => {
  const t = tempDir("quiesce-epipe-");
  try {
    const store = join(t.dir, "q.db");
    // A store with far more events than a pipe holds (64 KiB), so the reader goes away while
    // the writer still writes: made with one acquisition and SQL, not thousands of processes.
    const made = spawnSync(
      process.execPath,
      [CLI, "lock", "acquire", "s0", "--ttl", "1m", "--owner-pid", "none", "--store", store],
      { encoding: "utf8" },
    );
    assert.equal(made.status, 0, made.stderr);
    const db = new Database(store);
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
      INSERT INTO quiesce_events (at, kind, scope, token, host, pid, message)
      SELECT 1700000000000 + i, 'lease.acquired', 's' || i, 1, 'h', 1,
             'acquired with token 1 for 60000 ms, a message long enough to fill the pipe' FROM n`);
    db.close();
    const script = [
      `set -o pipefail 2>/dev/null || true`,
      `"${process.execPath}" "${CLI}" events --json --limit 1000 --store "${store}" 2>"${t.dir}/err" | head -c 100 >/dev/null`,
      `echo "status $?"`,
      // --follow, like `tail -f | head -1`, learns that its reader is gone when it next writes:
      // when its first lines fit in the pipe, only a new event tells it. Events keep coming
      // until it has stopped.
      `( "${process.execPath}" "${CLI}" events --follow --store "${store}" 2>>"${t.dir}/err" | head -1 >/dev/null; echo "follow $?" > "${t.dir}/follow" ) &`,
      `for i in $(seq 1 200); do [ -s "${t.dir}/follow" ] && break; "${process.execPath}" "${CLI}" lock acquire "late$i" --ttl 1m --owner-pid none --store "${store}" >/dev/null 2>>"${t.dir}/err"; sleep 0.1; done`,
      `wait`,
      `cat "${t.dir}/follow"`,
    ].join("\n");
    const r = spawnSync("bash", ["-c", script], { encoding: "utf8", timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /status 0\nfollow 0\n/, "exit 0 even with pipefail, --follow stops");
    assert.equal(readFileSync(join(t.dir, "err"), "utf8"), "", "nothing on stderr");
  } finally {
    t.cleanup();
  }
});

test("wave logs go beside the wave's SQLite store, never to another store's state directory", async () => {
  const t = tempDir("quiesce-wavelog-");
  try {
    const storeDir = join(t.dir, "site-a");
    mkdirSync(storeDir);
    const store = join(storeDir, "quiesce.db");
    const hosts = join(t.dir, "fleet.txt");
    writeFileSync(hosts, "h1\nh2\n");
    const home = join(t.dir, "home");
    const env = { HOME: home, XDG_STATE_HOME: "", QUIESCE_STORE: "" };
    const name = `logs-${process.pid}`;
    assert.equal(
      (await cli(["wave", "create", name, "--hosts", hosts, "--store", store], env)).code,
      0,
    );
    const run = await cli(
      ["wave", "run", name, "--patch", "echo patching {host}", "--store", store],
      env,
    );
    assert.equal(run.code, 0, run.stderr);
    const log = join(storeDir, "waves", name, "h1.log");
    assert.match(readFileSync(log, "utf8"), /^patching h1$/m);
    const defaultDir = join(dirname(defaultSqlitePath(env)), "waves", name);
    assert.equal(existsSync(defaultDir), false, `nothing in ${defaultDir}`);
    assert.equal(existsSync(join(home, ".local")), false);
  } finally {
    t.cleanup();
  }
});

test("a PostgreSQL store's wave logs: one directory per database and schema", () => {
  const env = { HOME: "/home/ops", XDG_STATE_HOME: "" };
  const a = pgSchemaUrl("a");
  const dir = defaultWaveLogDir({ backend: "postgres", url: a.url }, "june", env);
  const state = dirname(defaultSqlitePath(env));
  assert.ok(dir.startsWith(join(state, "postgres") + "/"), dir);
  assert.ok(dir.endsWith(`_${a.schema}/waves/june`), dir);
  const other = defaultWaveLogDir({ backend: "postgres", url: pgSchemaUrl("b").url }, "june", env);
  assert.notEqual(dir, other, "two schemas never share a log directory");
  assert.equal(
    defaultWaveLogDir({ backend: "sqlite", path: "/srv/q/quiesce.db" }, "june", env),
    "/srv/q/waves/june",
  );
});

/** Every number that looks like epoch ms, and every time key that is not an ISO string. */
function timeProblems(value: unknown, path = "$"): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => timeProblems(v, `${path}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const p = `${path}.${k}`;
    const own: string[] = [];
    if (typeof v === "number" && v > 1e12) own.push(`${p}=${v}`);
    if (/^(at|now)$|(At|Now)$/.test(k) && v !== null && typeof v !== "object") {
      if (typeof v !== "string" || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(v))
        own.push(`${p}=${String(v)}`);
    }
    return [...own, ...timeProblems(v, p)];
  });
}

test("JSON output: times are ISO 8601 everywhere, also inside event details and takeover records", async () => {
  const t = tempDir("quiesce-json-");
  try {
    const s = ["--store", join(t.dir, "q.db")];
    const dead = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim();
    await cli(["lock", "acquire", "host:db-7", "--ttl", "1s", "--owner-pid", dead, ...s]);
    await new Promise((r) => setTimeout(r, 1200));
    assert.equal((await cli(["lock", "acquire", "host:db-7", "--ttl", "1m", ...s])).code, 0);
    const outputs: [string, unknown][] = [];
    for (const args of [
      ["lock", "list", "--json"],
      ["lock", "show", "host:db-7", "--json"],
      ["incident", "host:db-7", "--json"],
      ["lock", "takeover", "host:db-7", "--dry-run", "--json"],
      ["check", "--format", "json"],
    ]) {
      const r = await cli([...args, ...s]);
      outputs.push([args.join(" "), JSON.parse(r.stdout)]);
    }
    const ev = await cli(["events", "--json", ...s]);
    ev.stdout
      .trim()
      .split("\n")
      .forEach((l, i) => outputs.push([`events line ${i}`, JSON.parse(l)]));
    assert.ok(
      outputs.some(([, v]) => JSON.stringify(v).includes('"previous"')),
      "a takeover record is there",
    );
    for (const [what, v] of outputs) assert.deepEqual(timeProblems(v), [], what);
  } finally {
    t.cleanup();
  }
});
