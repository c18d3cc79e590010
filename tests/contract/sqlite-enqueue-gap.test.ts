import assert from "node:assert/strict";
import { test } from "node:test";
import { openStore } from "../../src/store/open-store.js";
import type { LeaseStore } from "../../src/store/store.js";
import { sqliteBackend } from "../support/backends.js";
import { owner } from "./lease-store.contract.js";

/**
 * On SQLite a refused acquisition takes its place in line in a transaction of its own (see
 * SqliteStore.acquire). A release that commits between the two finds nobody in line: it grants
 * nothing and wakes nobody. The refusal must then not name the holder that has left, or the
 * waiter, trusting it, sleeps until its safety poll with the scope free.
 */
test("SQLite: a release between a refusal and its ticket does not leave the refusal naming the holder", async () => {
  const loc = sqliteBackend.prepare("enqueue-gap");
  const waiter = await openStore(loc.url);
  const holder = await openStore(loc.url);
  try {
    const held = await holder.leases.acquire({
      scope: "s",
      ttlMs: 10_000,
      owner: owner("holder"),
      ticket: null,
    });
    assert.ok(held.ok);
    // The release lands in the gap: after the refusal's commit, before the ticket's.
    const leases = waiter.leases as LeaseStore & { enqueue: LeaseStore["enqueue"] };
    const enqueue = leases.enqueue.bind(leases);
    let released = false;
    leases.enqueue = async (...args) => {
      const rel = await holder.leases.release({
        ...{ scope: "s", token: held.lease.token, runId: "holder" },
        ...{ host: "test-host", pid: 4242, reason: "done" },
      });
      released = rel.ok;
      return enqueue(...args);
    };
    const r = await waiter.leases.acquire({
      scope: "s",
      ttlMs: 10_000,
      owner: owner("waiter"),
      ticket: null,
      queueTtlMs: 5000,
    });
    assert.ok(released, "the release ran in the gap");
    assert.ok(!r.ok && r.ticket !== undefined, "refused, with a place in line");
    assert.equal(r.holder, null, "the refusal does not name the holder that released");
    assert.equal(r.waitersAhead, 0);
    const seen = await waiter.leases.peek("s", r.ticket);
    assert.ok(seen.free && !seen.granted, "nobody was granted it: the scope is free");
    const won = await waiter.leases.acquire({
      scope: "s",
      ttlMs: 10_000,
      owner: owner("waiter"),
      ticket: r.ticket,
    });
    assert.ok(won.ok, "and the waiter, reading again, takes it with its ticket");
  } finally {
    await waiter.close();
    await holder.close();
    await loc.cleanup();
  }
});
