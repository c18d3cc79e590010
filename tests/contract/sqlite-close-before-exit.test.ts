import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { test } from "node:test";
import { openStore } from "../../src/store/open-store.js";
import { sqliteBackend } from "../support/backends.js";
import { owner } from "./lease-store.contract.js";

const OPEN_STORE = new URL("../../src/store/open-store.js", import.meta.url).href;

/**
 * One process's life as the CLI's `run` lives it: open the store, acquire, release, close with
 * `processExits` (which leaves SQLite's write-ahead log in place) and process.exit().
 */
function cycleInAProcess(url: string, runId: string): number {
  const code = `
    const { openStore } = await import(${JSON.stringify(OPEN_STORE)});
    const store = await openStore(${JSON.stringify(url)});
    const owner = ${JSON.stringify(owner(runId))};
    const r = await store.leases.acquire({ scope: "s", ttlMs: 60000, owner, ticket: null });
    if (!r.ok) { console.error("refused: " + r.reason); process.exit(3); }
    const rel = await store.leases.release({
      scope: "s", token: r.lease.token, runId: owner.runId, host: owner.host, pid: owner.pid,
      reason: "done",
    });
    if (!rel.ok) { console.error("release refused"); process.exit(4); }
    await store.close({ processExits: true });
    process.stdout.write(String(r.lease.token));
    process.exit(0);
  `;
  const p = spawnSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8" });
  assert.equal(p.status, 0, p.stderr);
  return Number(p.stdout);
}

test("SQLite: a process that exits without folding its log in loses no commit for the next one", async () => {
  const loc = sqliteBackend.prepare("close-before-exit");
  try {
    await (await openStore(loc.url)).close(); // created and migrated, then closed for real
    assert.ok(!existsSync(`${loc.url}-wal`), "a real close folds the log in and removes it");
    const tokens = [1, 2, 3].map((i) => cycleInAProcess(loc.url, `run-${i}`));
    assert.deepEqual(tokens, [1, 2, 3], "each process saw the one before it acquire and release");
    assert.ok(existsSync(`${loc.url}-wal`), "the log was left for the next opener");
    const store = await openStore(loc.url);
    try {
      const p = await store.leases.peek("s", null);
      assert.ok(p.free, "the last release is there");
      const events = await store.events.list({ scope: "s" });
      assert.equal(events.filter((e) => e.kind === "lease.released").length, 3);
    } finally {
      await store.close();
    }
    assert.ok(!existsSync(`${loc.url}-wal`), "and a real close folds it in");
  } finally {
    await loc.cleanup();
  }
});
