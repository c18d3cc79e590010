import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { closeSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { cli } from "../support/cli.js";
import { hasNoStack } from "../support/e2e.js";
import { tempDir } from "../support/paths.js";

/** Bad input: one clear sentence on stderr, the documented exit code, no stack trace. */
describe("bad input", () => {
  const t = tempDir();
  const store = join(t.dir, "q.db");

  const cases: { name: string; args: string[]; code: number; stderr: RegExp }[] = [
    {
      name: "unknown flag",
      args: ["run", "--lease", "s", "--frobnicate", "--", "true"],
      code: 2,
      stderr: /unknown option '--frobnicate'/,
    },
    {
      name: "unknown command",
      args: ["lokc", "list"],
      code: 2,
      stderr: /unknown command 'lokc'.*lock/s,
    },
    {
      name: "missing --lease",
      args: ["run", "--", "true"],
      code: 2,
      stderr: /--lease SCOPE is required/,
    },
    {
      name: "missing command",
      args: ["run", "--lease", "s"],
      code: 2,
      stderr: /missing required argument 'cmd'/,
    },
    {
      name: "a remote grace shorter than the grace plus the margin (I11)",
      args: ["run", "--lease", "s", "--grace", "10s", "--remote-grace", "0s", "--", "true"],
      code: 2,
      stderr:
        /--remote-grace: 0ms is shorter than --grace 10s plus the safety margin 3s.*use at least 13s/,
    },
    {
      name: "wave run: a remote grace shorter than the grace plus the margin",
      args: ["wave", "run", "w", "--patch", "true", "--grace", "30s", "--remote-grace", "20s"],
      code: 2,
      stderr: /--remote-grace: 20s is shorter than --grace 30s plus the safety margin/,
    },
    {
      name: "duration 90x",
      args: ["run", "--lease", "s", "--ttl", "90x", "--", "true"],
      code: 2,
      stderr: /--ttl: "90x" is not a duration/,
    },
    {
      name: "negative duration",
      args: ["run", "--lease", "s", "--wait", "-5s", "--", "true"],
      code: 2,
      stderr: /--wait: "-5s" is not a duration \(it is negative\)/,
    },
    {
      name: "duration without unit",
      args: ["run", "--lease", "s", "--ttl", "30", "--", "true"],
      code: 2,
      stderr: /--ttl: "30" .*no unit/,
    },
    {
      name: "heartbeat not shorter than ttl",
      args: ["run", "--lease", "s", "--ttl", "10s", "--heartbeat", "10s", "--", "true"],
      code: 2,
      stderr: /--heartbeat: 10s is not shorter than --ttl 10s/,
    },
    {
      name: "ttl of zero",
      args: ["lock", "acquire", "s", "--ttl", "0s"],
      code: 2,
      stderr: /--ttl: 0ms is too short/,
    },
    {
      name: "empty scope",
      args: ["run", "--lease", "", "--", "true"],
      code: 2,
      stderr: /scope name is empty/,
    },
    {
      name: "over-long scope",
      args: ["run", "--lease", "x".repeat(201), "--", "true"],
      code: 2,
      stderr: /201 characters long; the limit is 200/,
    },
    {
      name: "scope with spaces",
      args: ["lock", "show", "a b"],
      code: 2,
      stderr: /"a b" is not a valid scope name/,
    },
    {
      name: "bad system name",
      args: ["lock", "acquire", "s", "--ttl", "5s", "--system", "Back Up"],
      code: 2,
      stderr: /--system: "Back Up" is not a valid system name/,
    },
    {
      name: "bad token",
      args: ["lock", "release", "s", "--token", "abc"],
      code: 2,
      stderr: /--token: "abc" is not a fencing token/,
    },
    {
      name: "unsupported store",
      args: ["lock", "list", "--store", "redis://127.0.0.1:6379"],
      code: 2,
      stderr: /"redis:\/\/" stores are not supported/,
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const r = await cli([
        ...c.args,
        ...(c.args[0] === "lock" && c.args.includes("--store") ? [] : ["--store", store]),
      ]);
      assert.equal(r.code, c.code, `exit code; stderr: ${r.stderr}`);
      assert.match(r.stderr, c.stderr);
      assert.equal(r.stderr.trim().split("\n").length, 1, `one line: ${r.stderr}`);
      assert.ok(hasNoStack(r));
    });
  }

  test("nothing was written by invalid invocations of run", async () => {
    const r = await cli(["lock", "list", "--json", "--store", store]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((JSON.parse(r.stdout) as { leases: unknown[] }).leases, []);
  });

  test("an unreachable PostgreSQL store: exit 1, naming the store without its password", async () => {
    const r = await cli(["lock", "list", "--store", "postgres://agent:s3cret@127.0.0.1:1/quiesce"]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /cannot reach the PostgreSQL store postgres:\/\/agent:\*\*\*@127\.0\.0\.1:1\/quiesce/,
    );
    assert.doesNotMatch(r.stderr, /s3cret/);
    assert.ok(hasNoStack(r));
  });

  test("QUIESCE_DEBUG=1 adds the stack trace", async () => {
    const r = await cli(["lock", "list", "--store", "postgres://127.0.0.1:1/x"], {
      QUIESCE_DEBUG: "1",
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /\n\s+at /);
    // From dist/src, not the bundle (whose local names are shortened): the frames name files.
    assert.match(r.stderr, /dist\/src\/store\/postgres\/[\w-]+\.js:\d+/);
    assert.doesNotMatch(r.stderr, /quiesce\.cjs/);
  });

  test("a file that is not a SQLite database: exit 2", async () => {
    const f = join(t.dir, "notes.txt");
    writeFileSync(f, "this is not a database, it is a grocery list\n".repeat(100));
    const r = await cli(["lock", "list", "--store", f]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /notes\.txt is not a SQLite database/);
    assert.ok(hasNoStack(r));
  });

  test("somebody else's SQLite database: exit 2, and it is left untouched", async () => {
    const f = join(t.dir, "other.db");
    const db = new Database(f);
    db.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY)");
    db.close();
    const r = await cli(["lock", "list", "--store", f]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /is a SQLite database but not a quiesce store \(it has tables invoices\)/,
    );
    const check = new Database(f);
    const tables = check.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all();
    check.close();
    assert.deepEqual(tables, [{ name: "invoices" }]);
  });

  test("a corrupt store file: exit 2 saying so", async () => {
    const f = join(t.dir, "corrupt.db");
    assert.equal((await cli(["store", "migrate", "--store", f])).code, 0);
    // Overwrite the schema table's page content (page 1 after the 100-byte file header).
    const fd = openSync(f, "r+");
    writeSync(fd, Buffer.alloc(400, 0xa5), 0, 400, 100);
    closeSync(fd);
    const r = await cli(["lock", "list", "--store", f]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /corrupt|not a SQLite database/);
    assert.ok(hasNoStack(r));
  });

  test("a store written by a newer quiesce: exit 2 with upgrade advice", async () => {
    const f = join(t.dir, "newer.db");
    assert.equal((await cli(["store", "migrate", "--store", f])).code, 0);
    const db = new Database(f);
    db.exec("UPDATE quiesce_meta SET value = '42' WHERE key = 'schema_version'");
    db.close();
    const r = await cli(["lock", "list", "--store", f]);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /schema version 42, newer than this quiesce understands .*upgrade quiesce/,
    );
  });

  test("an invalid quiesce.yaml: exit 2 naming the file and the key", async () => {
    const f = join(t.dir, "quiesce.yaml");
    writeFileSync(f, "alerts:\n  webhook:\n    url: http://127.0.0.1:9/hook\n    timeout: 5x\n");
    const r = await cli(["lock", "list", "--config", f, "--store", store]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /quiesce\.yaml: alerts\.webhook\.timeout: .*5x.* is not a duration/);
    assert.equal(r.stderr.trim().split("\n").length, 1);
    const missing = await cli([
      "lock",
      "list",
      "--config",
      join(t.dir, "nope.yaml"),
      "--store",
      store,
    ]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /nope\.yaml/);
  });

  test("settings come from quiesce.yaml when no flag or variable gives them", async () => {
    const f = join(t.dir, "system.yaml");
    writeFileSync(f, `store: ${store}\nsystem: backup\n`);
    const r = await cli(["lock", "acquire", "from-config", "--ttl", "1m", "--config", f]);
    assert.equal(r.code, 0, r.stderr);
    const show = await cli(["lock", "show", "from-config", "--json", "--config", f]);
    assert.equal((JSON.parse(show.stdout) as { owner: { system: string } }).owner.system, "backup");
  });

  test("a store path that is a directory: exit 2", async () => {
    const r = await cli(["lock", "list", "--store", t.dir]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /is a directory/);
  });

  test("cleanup", () => t.cleanup());
});
