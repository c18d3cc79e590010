import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { once } from "node:events";
import { describe, test } from "node:test";
import Database from "better-sqlite3";
import { BusyWait } from "../../../src/store/sqlite/busy-wait.js";
import { SqliteTx } from "../../../src/store/sqlite/sqlite-tx.js";
import { tempDir } from "../../support/paths.js";

/**
 * Another process takes the write lock and holds it `holdMs`, then commits. Resolves once the
 * lock is held (the child says so on stdout).
 */
async function holdWriteLock(path: string, holdMs: number) {
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import Database from "better-sqlite3";
       const db = new Database(${JSON.stringify(path)});
       db.exec("BEGIN IMMEDIATE; INSERT INTO t VALUES (1)");
       process.stdout.write("held\\n");
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${holdMs});
       db.exec("COMMIT");`,
    ],
    { stdio: ["ignore", "pipe", "inherit"], cwd: process.cwd() },
  );
  const [chunk] = (await once(child.stdout, "data")) as [Buffer];
  assert.equal(String(chunk).trim(), "held");
  return { exited: once(child, "exit") };
}

function openDb(path: string, timeout: number) {
  const db = new Database(path, { timeout });
  db.pragma("journal_mode = WAL");
  return db;
}

describe("SQLite write lock: waiting in fine steps", () => {
  test("a write waits out another process's transaction and then commits", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const path = join(tmp.dir, "busy.db");
    const db = openDb(path, 5000);
    t.after(() => db.close());
    db.exec("CREATE TABLE t (x INTEGER)");
    const tx = new SqliteTx(db, path);
    const holder = await holdWriteLock(path, 300);
    await tx.write("insert", () => db.prepare("INSERT INTO t VALUES (2)").run());
    await holder.exited;
    const rows = db.prepare("SELECT x FROM t ORDER BY x").pluck().all();
    // The holder's row is there: our transaction began only after its commit.
    assert.deepEqual(rows, [1, 2]);
    assert.equal(db.pragma("busy_timeout", { simple: true }), 5000, "the timeout is restored");
  });

  test("gives up after the connection's busy timeout, with SQLite's busy error", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const path = join(tmp.dir, "busy.db");
    const db = openDb(path, 150);
    t.after(() => db.close());
    db.exec("CREATE TABLE t (x INTEGER)");
    const busy = new BusyWait(db);
    const holder = await holdWriteLock(path, 2000);
    const begun = performance.now();
    assert.throws(
      () => busy.run((inside) => db.transaction(() => inside()).immediate()),
      (e: { code?: string }) => e.code === "SQLITE_BUSY",
    );
    // Not a timing target: it must not give up before the timeout it was given.
    assert.ok(performance.now() - begun >= 150, "waited at least the busy timeout");
    assert.equal(db.pragma("busy_timeout", { simple: true }), 150, "the timeout is restored");
    await holder.exited;
  });

  test("an error inside the transaction is not retried", (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const path = join(tmp.dir, "busy.db");
    const db = openDb(path, 1000);
    t.after(() => db.close());
    const busy = new BusyWait(db);
    let runs = 0;
    const busyInside = Object.assign(new Error("busy inside"), { code: "SQLITE_BUSY" });
    assert.throws(
      () =>
        busy.run((inside) =>
          db
            .transaction(() => {
              inside();
              runs++;
              throw busyInside;
            })
            .immediate(),
        ),
      /busy inside/,
    );
    assert.equal(runs, 1);
    assert.equal(db.pragma("busy_timeout", { simple: true }), 1000);
  });
});
