import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";
import { REPO, tempDir } from "../../support/paths.js";

describe("SQLite store file", () => {
  test("is created with mode 0600, and so are its -wal and -shm files", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const path = join(tmp.dir, "sub", "dir", "q.db");
    const store = new SqliteStore(path);
    try {
      await store.acquire({
        scope: "s",
        ttlMs: 1000,
        ticket: null,
        owner: {
          runId: "r",
          system: "quiesce",
          host: "h",
          pid: 1,
          pidStart: null,
          bootId: null,
          childPid: null,
          childPidStart: null,
          command: null,
          note: null,
        },
      });
      for (const f of [path, `${path}-wal`, `${path}-shm`]) {
        assert.ok(existsSync(f), `${f} exists while the store is open`);
        assert.equal(statSync(f).mode & 0o777, 0o600, `${f} is private`);
      }
      assert.equal(statSync(join(tmp.dir, "sub")).mode & 0o777, 0o700);
      const info = await store.info();
      assert.equal(info.settings.journal_mode, "wal");
      assert.equal(info.settings.synchronous, "FULL");
    } finally {
      await store.close();
    }
  });
});

/**
 * better-sqlite3 is compiled so that entering WAL mode drops to synchronous=NORMAL (no fsync
 * per commit) while `PRAGMA synchronous` still reports FULL. Reading the pragma proves nothing;
 * counting the fsyncs does. The control run (WAL without setting FULL again) shows the trap is
 * real on this build, so this test would catch a regression.
 */
const strace = spawnSync("strace", ["-V"]).status === 0;

describe(
  "SQLite durability: one fsync per commit",
  { skip: strace ? false : "strace is not installed" },
  () => {
    const COMMITS = 40;

    function countSyncs(script: string): number {
      const r = spawnSync(
        "strace",
        [
          "-f",
          "-c",
          "-e",
          "trace=fsync,fdatasync",
          process.execPath,
          "--input-type=module",
          "-e",
          script,
        ],
        { cwd: REPO, encoding: "utf8" },
      );
      assert.equal(r.status, 0, r.stderr);
      let n = 0;
      for (const line of r.stderr.split("\n")) {
        const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(fsync|fdatasync)\s*$/.exec(line);
        if (m) n += Number(m[1]);
      }
      return n;
    }

    // An acquisition is flushed before it returns; a release commits to the WAL only (it
    // survives its process's crash: sqlite-release-durability.test.ts), so a cycle costs one.
    test(`${COMMITS} acquire+release cycles through the store fsync every acquisition`, (t) => {
      const tmp = tempDir();
      t.after(tmp.cleanup);
      const db = join(tmp.dir, "q.db");
      const syncs = countSyncs(`
      import { SqliteStore } from "./dist/src/store/sqlite/sqlite-store.js";
      const s = new SqliteStore(${JSON.stringify(db)});
      const owner = { runId: "r", system: "quiesce", host: "h", pid: 1, pidStart: null, bootId: null,
                      childPid: null, childPidStart: null, command: null, note: null };
      for (let i = 0; i < ${COMMITS}; i++) {
        const r = await s.acquire({ scope: "s", ttlMs: 5000, owner, ticket: null });
        await s.release({ scope: "s", token: r.lease.token, runId: "r", host: "h", pid: 1, reason: "x" });
      }
      await s.close();`);
      assert.ok(syncs >= COMMITS, `${syncs} fsyncs for ${COMMITS} acquisitions`);
    });

    test("control: WAL without setting synchronous=FULL again skips the fsyncs on this build", (t) => {
      const tmp = tempDir();
      t.after(tmp.cleanup);
      const db = join(tmp.dir, "raw.db");
      const syncs = countSyncs(`
      import Database from "better-sqlite3";
      const d = new Database(${JSON.stringify(db)});
      d.pragma("journal_mode = WAL");
      if (d.pragma("synchronous", { simple: true }) !== 2) throw new Error("expected the pragma to claim FULL");
      d.exec("CREATE TABLE t (x)");
      const ins = d.prepare("INSERT INTO t VALUES (?)");
      for (let i = 0; i < ${2 * COMMITS}; i++) ins.run(i);
      d.close();`);
      assert.ok(
        syncs < COMMITS / 2,
        `only ${syncs} fsyncs for ${2 * COMMITS} commits: the pragma lies`,
      );
    });
  },
);
