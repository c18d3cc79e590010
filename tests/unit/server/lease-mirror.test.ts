import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { LeaseMirror } from "../../../src/server/lease-mirror.js";
import { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../../src/store/store.js";
import { owner } from "../helpers.js";

const dir = mkdtempSync(join(tmpdir(), "quiesce-mirror-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Counts readLeasesSince calls and how many records each answer carried. */
function counted(store: Store) {
  const calls: number[] = [];
  const orig = store.leases.readLeasesSince.bind(store.leases);
  store.leases.readLeasesSince = async (known) => {
    const r = await orig(known);
    calls.push(r.changed.size);
    return r;
  };
  return calls;
}

describe("LeaseMirror: the server's copy of the held leases", () => {
  test("every read equals listLeases, and re-reads only what changed", async () => {
    const store = new SqliteStore(join(dir, "a.db"));
    const writer = new SqliteStore(join(dir, "a.db"));
    try {
      const calls = counted(store);
      const mirror = new LeaseMirror(store);
      const take = async (scope: string) => {
        const r = await writer.acquire({ scope, ttlMs: 60_000, owner: owner(), ticket: null });
        assert.ok(r.ok);
        return r.lease;
      };
      const same = async () => {
        const read = await mirror.read();
        const list = await store.leases.listLeases();
        assert.deepEqual(read.leases, list.leases);
        assert.deepEqual(
          read.texts.map((t) => t.lease),
          list.leases,
          "the JSON parts are of the same leases",
        );
        return read;
      };
      assert.deepEqual((await same()).leases, []);
      const a = await take("s:a");
      await take("s:b");
      await take("s:c");
      await same();
      assert.equal(calls.at(-1), 3, "the first held leases are all read");
      await same();
      assert.equal(calls.at(-1), 0, "nothing changed, nothing read again");
      await writer.renew([{ scope: "s:a", token: a.token, ttlMs: 60_000 }]);
      const rel = await writer.release({
        scope: "s:b",
        token: 1,
        runId: "r-1",
        host: "db-7",
        pid: 4121,
        reason: "done",
      });
      assert.ok(rel.ok);
      const read = await same();
      assert.equal(calls.at(-1), 1, "only the renewed lease is read again");
      assert.deepEqual(
        read.leases.map((l) => l.scope),
        ["s:a", "s:c"],
      );
      // Leases that come before, between and after the kept ones.
      await take("s:0");
      await take("s:b2");
      await take("s:d");
      const more = await same();
      assert.equal(calls.at(-1), 3);
      assert.deepEqual(
        more.leases.map((l) => l.scope),
        ["s:0", "s:a", "s:b2", "s:c", "s:d"],
      );
      await same();
      assert.equal(calls.at(-1), 0);
    } finally {
      await writer.close();
      await store.close();
    }
  });

  test("a request never gets a read that began before it; those arriving meanwhile share the next", async () => {
    const store = new SqliteStore(join(dir, "b.db"));
    const writer = new SqliteStore(join(dir, "b.db"));
    try {
      const calls = counted(store);
      const inner = store.leases.readLeasesSince.bind(store.leases);
      let open: () => void = () => undefined;
      let gate: Promise<void> | null = new Promise((r) => (open = r));
      store.leases.readLeasesSince = async (known) => {
        const r = await inner(known); // read now...
        if (gate) await gate; // ...answer later, as a slow store would
        return r;
      };
      const mirror = new LeaseMirror(store);
      const first = mirror.read();
      await new Promise((r) => setTimeout(r, 20)); // the first read has read the store
      // An operator's write commits, then two requests arrive while the first read is out.
      const taken = await writer.acquire({
        scope: "s:new",
        ttlMs: 60_000,
        owner: owner(),
        ticket: null,
      });
      assert.ok(taken.ok);
      const [second, third] = [mirror.read(), mirror.read()];
      gate = null;
      open();
      assert.deepEqual((await first).leases, [], "the first read began before the write");
      const [b, c] = await Promise.all([second, third]);
      assert.ok(b === c, "the requests that arrived meanwhile share one read");
      assert.deepEqual(
        b.leases.map((l) => l.scope),
        ["s:new"],
        "a request sees what was committed before it arrived",
      );
      assert.equal(calls.length, 2);
      await mirror.read();
      assert.equal(calls.length, 3, "a later request reads again");
    } finally {
      await writer.close();
      await store.close();
    }
  });

  test("a store that fails is an error for the request, never the old copy", async () => {
    const store = new SqliteStore(join(dir, "c.db"));
    try {
      const mirror = new LeaseMirror(store);
      await mirror.read();
      const orig = store.leases.readLeasesSince.bind(store.leases);
      store.leases.readLeasesSince = () => Promise.reject(new Error("the store is away"));
      await assert.rejects(mirror.read(), /the store is away/);
      store.leases.readLeasesSince = orig;
      assert.deepEqual((await mirror.read()).leases, []);
    } finally {
      await store.close();
    }
  });
});
