import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { once } from "node:events";
import { describe, test, type TestContext } from "node:test";
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

/** A WAL database with one table `t`, removed after the test. */
function scratchDb(t: TestContext, name: string, timeout: number) {
  const tmp = tempDir();
  t.after(tmp.cleanup);
  const path = join(tmp.dir, name);
  const db = openDb(path, timeout);
  t.after(() => db.close());
  db.exec("CREATE TABLE t (x INTEGER)");
  return { db, path };
}

describe("SQLite write lock: waiting in fine steps", () => {
  test("a write waits out another process's transaction and then commits", async (t) => {
    const { db, path } = scratchDb(t, "busy.db", 5000);
    const tx = new SqliteTx(db, path);
    const holder = await holdWriteLock(path, 300);
    await tx.write("insert", () => db.prepare("INSERT INTO t VALUES (2)").run());
    await holder.exited;
    const rows = db.prepare("SELECT x FROM t ORDER BY x").pluck().all();
    // The holder's row is there: our transaction began only after its commit.
    assert.deepEqual(rows, [1, 2]);
  });

  test("everything but a write transaction runs with the connection's full timeout", async (t) => {
    const { db, path } = scratchDb(t, "busy.db", 5000);
    const tx = new SqliteTx(db, path);
    const timeout = () => db.pragma("busy_timeout", { simple: true });
    const seen: Record<string, unknown> = {};
    await tx.write("insert", () => {
      // The BEGIN took the lock and the snapshot: nothing inside waits on the timeout.
      seen.insideWrite = timeout();
      db.prepare("INSERT INTO t VALUES (1)").run();
    });
    await tx.write("insert", () => db.prepare("INSERT INTO t VALUES (2)").run());
    await tx.read("read", () => (seen.insideRead = timeout()));
    await tx.write("insert", () => db.prepare("INSERT INTO t VALUES (3)").run());
    await tx.run("one statement", () => (seen.outside = timeout()));
    assert.deepEqual(seen, { insideWrite: 0, insideRead: 5000, outside: 5000 });
    // A write that waited out another process, then a read: the read is patient again.
    const holder = await holdWriteLock(path, 200);
    await tx.write("insert", () => db.prepare("INSERT INTO t VALUES (4)").run());
    await holder.exited;
    const afterWait = await tx.read("read", () => timeout());
    assert.equal(afterWait, 5000);
  });

  test("gives up after the connection's busy timeout, with SQLite's busy error", async (t) => {
    const { db, path } = scratchDb(t, "busy.db", 150);
    const busy = new BusyWait(db);
    const holder = await holdWriteLock(path, 2000);
    const begun = performance.now();
    assert.throws(
      () => busy.run((inside) => db.transaction(() => inside()).immediate()),
      (e: { code?: string }) => e.code === "SQLITE_BUSY",
    );
    // Not a timing target: it must not give up before the timeout it was given.
    assert.ok(performance.now() - begun >= 150, "waited at least the busy timeout");
    busy.patient();
    assert.equal(db.pragma("busy_timeout", { simple: true }), 150, "patient() restores it");
    await holder.exited;
  });

  test("an error inside the transaction is not retried", (t) => {
    const { db } = scratchDb(t, "busy.db", 1000);
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
    busy.patient();
    assert.equal(db.pragma("busy_timeout", { simple: true }), 1000);
  });
});

describe("SQLite pragmas set per transaction", () => {
  test("an unsynced write commits with synchronous=NORMAL, from its first call on", async (t) => {
    const { db, path } = scratchDb(t, "sync.db", 1000);
    db.pragma("synchronous = FULL");
    const tx = new SqliteTx(db, path);
    const level = () => db.pragma("synchronous", { simple: true });
    const seen: unknown[] = [];
    // A setting pragma compiled once and run later does nothing on its first run: each call
    // here must set it for real.
    for (let i = 0; i < 3; i++) {
      await tx.writeUnsynced("insert", () => {
        seen.push(level());
        db.prepare("INSERT INTO t VALUES (?)").run(i);
      });
      seen.push(level());
    }
    assert.deepEqual(seen, [1, 2, 1, 2, 1, 2]);
  });
});
