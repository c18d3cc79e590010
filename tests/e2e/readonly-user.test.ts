import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cli, startCli, waitFor, type CliResult } from "../support/cli.js";
import { showLease } from "../support/e2e.js";
import { CLI, tempDir } from "../support/paths.js";
import { pgExec, pgSchemaUrl, pgSkip } from "../support/pg.js";

/**
 * A monitoring user that may read the store but not write it: uid nobody, in a group (gid
 * 4242, standing for `quiesce`) that owns the store's directory (2750) and file (0640). This is
 * the setup the README documents. Needs root (to switch users) and setpriv (util-linux).
 */
const GID = 4242;
const NOBODY = 65534;
const why =
  process.getuid?.() !== 0
    ? "needs root to run the CLI as another user"
    : spawnSync("setpriv", ["--version"]).status !== 0
      ? "setpriv (util-linux) is not installed"
      : false;

/** The real CLI as uid nobody, gid GID, no other groups. */
function asMonitor(args: string[]): CliResult {
  const r = spawnSync(
    "setpriv",
    [
      ...["--reuid", String(NOBODY), "--regid", String(GID), "--clear-groups"],
      ...[process.execPath, CLI, ...args],
    ],
    { encoding: "utf8", env: { ...process.env, HOME: "/nonexistent", QUIESCE_DEBUG: "" } },
  );
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

const READS: string[][] = [
  ["check"],
  ["check", "--format", "json"],
  ["lock", "list", "--json"],
  ["lock", "show", "held"],
  ["events", "--limit", "5"],
  ["incident", "held"],
  ["runs", "list"],
  ["wave", "status"],
  ["store", "info"],
  ["state", "get", "held"],
  ["maintenance", "status"],
];

function assertReads(store: string, when: string): void {
  for (const args of READS) {
    const r = asMonitor([...args, "--store", store]);
    assert.equal(r.code, 0, `${when}: ${args.join(" ")}: ${r.stdout}${r.stderr}`);
  }
  const list = JSON.parse(asMonitor(["lock", "list", "--json", "--store", store]).stdout) as {
    leases: { scope: string }[];
  };
  assert.deepEqual(
    list.leases.map((l) => l.scope),
    ["held"],
    `${when}: the reader sees the writer's lease`,
  );
}

test(
  "a monitoring user with read permission only runs every read-only command, with and without a writer connected",
  { skip: why },
  async () => {
    const t = tempDir("quiesce-ro-");
    try {
      chmodSync(t.dir, 0o755);
      const dir = join(t.dir, "state");
      const store = join(dir, "quiesce.db");
      mkdirSync(dir);
      chownSync(dir, 0, GID);
      chmodSync(dir, 0o2750); // setgid: the -wal/-shm files a writer creates get the group too
      assert.equal(
        (await cli(["lock", "acquire", "held", "--ttl", "10m", "--store", store])).code,
        0,
      );
      chownSync(store, 0, GID);
      chmodSync(store, 0o640);

      // 1. No writer connected: SQLite removed -wal/-shm, and the reader cannot create them.
      assert.deepEqual(readdirSync(dir), ["quiesce.db"]);
      assertReads(store, "no writer");
      assert.deepEqual(readdirSync(dir), ["quiesce.db"], "the reader left nothing behind");

      // 2. A writer holds the store open (its -wal/-shm exist, 0640, group GID).
      const writer = startCli([
        "run",
        "--lease",
        "busy",
        "--ttl",
        "5s",
        "--store",
        store,
        "--",
        "sleep",
        "30",
      ]);
      try {
        await waitFor("the writer's lease", async () => (await showLease(store, "busy")) !== null);
        assert.ok(existsSync(`${store}-shm`));
        assert.equal(statSync(`${store}-shm`).gid, GID);
        const r = asMonitor(["lock", "list", "--json", "--store", store]);
        assert.equal(r.code, 0, r.stderr);
        const scopes = (JSON.parse(r.stdout) as { leases: { scope: string }[] }).leases.map(
          (l) => l.scope,
        );
        assert.deepEqual(scopes.sort(), ["busy", "held"]);
        const c = asMonitor(["check", "--store", store]);
        assert.equal(c.code, 0, c.stdout);
      } finally {
        process.kill(writer.pid, "SIGTERM");
        await writer.done;
      }

      // A write as the monitoring user is refused with one sentence, and changes nothing.
      const w = asMonitor(["lock", "acquire", "other", "--ttl", "1m", "--store", store]);
      assert.equal(w.code, 1, w.stderr);
      assert.match(w.stderr, /^quiesce: the SQLite store .* failed to .*readonly/);
      assert.equal(await showLease(store, "other"), null);
    } finally {
      t.cleanup();
    }
  },
);

test("PostgreSQL: a role with SELECT only runs every read-only command", async (t) => {
  const skip = await pgSkip();
  if (skip) return t.skip(skip);
  const s = pgSchemaUrl("ro-role");
  const role = `${s.schema}_monitor`.slice(0, 63);
  try {
    assert.equal(
      (await cli(["lock", "acquire", "held", "--ttl", "10m", "--store", s.url])).code,
      0,
    );
    await pgExec(`CREATE ROLE ${role} LOGIN`);
    await pgExec(`GRANT USAGE ON SCHEMA ${s.schema} TO ${role}`);
    await pgExec(`GRANT SELECT ON ALL TABLES IN SCHEMA ${s.schema} TO ${role}`);
    const u = new URL(s.url);
    u.username = role;
    const url = u.toString();
    for (const args of READS) {
      const r = await cli([...args, "--store", url]);
      assert.equal(r.code, 0, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    }
    const w = await cli(["lock", "acquire", "other", "--ttl", "1m", "--store", url]);
    assert.equal(w.code, 1, w.stderr);
    assert.match(w.stderr, /permission denied/);
  } finally {
    await s.drop();
    await pgExec(`DROP ROLE IF EXISTS ${role}`);
  }
});
