import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Leases } from "../../src/lease/leases.js";
import { openStore } from "../../src/store/open-store.js";
import type { ScopeWatch, Store } from "../../src/store/store.js";
import type { Backend } from "../support/backends.js";
import { owner } from "./lease-store.contract.js";

/** Long enough that only a missing hint (not a slow machine) can run it out. */
const HINT_WAIT_MS = 30_000;

/**
 * Wake-ups for waiters (`store.leases.watch`): a release by another connection (another
 * process, in production) wakes a waiter's watch; a hint is only a reason to re-read; and
 * with every hint dropped (QUIESCE_FAULT_DROP_WAKEUPS=1) a waiter still gets the lease, on
 * its safety poll.
 */
export async function defineLeaseWakeupsContract(backend: Backend): Promise<void> {
  const skip = await backend.skip();

  describe(`Wake-up contract: ${backend.name}`, { skip }, () => {
    async function withTwo(tag: string, fn: (a: Store, b: Store) => Promise<void>) {
      const loc = backend.prepare(tag);
      const a = await openStore(loc.url);
      const b = await openStore(loc.url);
      try {
        await fn(a, b);
      } finally {
        await a.close();
        await b.close();
        await loc.cleanup();
      }
    }

    async function live(w: ScopeWatch): Promise<void> {
      for (let i = 0; i < 500 && !w.live; i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(w.live, "the watch never became live (no LISTEN connection, no wake file)");
    }

    test("a release by another connection wakes a waiter, and the re-read finds it free", () =>
      withTwo("wake", async (a, b) => {
        const held = await b.leases.acquire({
          scope: "s",
          ttlMs: 10_000,
          owner: owner("holder"),
          ticket: null,
        });
        assert.ok(held.ok);
        const w = a.leases.watch("s");
        try {
          await live(w);
          const ticket = await a.leases.enqueue("s", 10_000, owner("waiter"));
          const seen = w.hints;
          const rel = await b.leases.release({
            ...{ scope: "s", token: held.lease.token, runId: "holder" },
            ...{ host: "test-host", pid: 4242, reason: "done" },
          });
          assert.ok(rel.ok);
          await w.next(seen, HINT_WAIT_MS);
          assert.ok(w.hints > seen, "no hint arrived for the release");
          const p = await a.leases.peek("s", ticket);
          assert.equal(p.free, true);
          assert.equal(p.waitersAhead, 0);
        } finally {
          w.close();
        }
      }));

    test("a release wakes the waiter first in line, not the ones behind it", () =>
      withTwo("head", async (a, b) => {
        const held = await b.leases.acquire({
          scope: "s",
          ttlMs: 10_000,
          owner: owner("holder"),
          ticket: null,
        });
        assert.ok(held.ok);
        const first = a.leases.watch("s");
        const second = a.leases.watch("s");
        try {
          await live(first);
          first.setTicket(await a.leases.enqueue("s", 10_000, owner("first")));
          second.setTicket(await a.leases.enqueue("s", 10_000, owner("second")));
          const seen = { first: first.hints, second: second.hints, named: first.named };
          const rel = await b.leases.release({
            ...{ scope: "s", token: held.lease.token, runId: "holder" },
            ...{ host: "test-host", pid: 4242, reason: "done" },
          });
          assert.ok(rel.ok);
          await first.next(seen.first, HINT_WAIT_MS);
          assert.ok(first.hints > seen.first, "the first in line was not woken");
          assert.equal(first.named, seen.named + 1, "the hint did not name the first in line");
          // Both watches hear the same notification (one LISTEN connection, one wake file read):
          // had the second been woken, it would have been by now.
          await new Promise((r) => setTimeout(r, 100));
          assert.equal(second.hints, seen.second, "the second in line was woken by the release");
        } finally {
          first.close();
          second.close();
        }
      }));

    test("a watch awaiting its ticket counts a release that named it, once it knows it, and no other", () =>
      withTwo("await", async (a, b) => {
        const release = (token: number) =>
          b.leases.release({
            ...{ scope: "s", token, runId: "holder" },
            ...{ host: "test-host", pid: 4242, reason: "done" },
          });
        const take = () =>
          b.leases.acquire({ scope: "s", ttlMs: 10_000, owner: owner("holder"), ticket: null });
        // First: the release names our ticket before we know it.
        const held = await take();
        assert.ok(held.ok);
        const mine = a.leases.watch("s");
        // No ticket, not awaiting one: it takes every hint, so it shows when the release's has come.
        const any = a.leases.watch("s");
        try {
          await live(mine);
          mine.awaitTicket();
          const t = await a.leases.enqueue("s", 10_000, owner("waiter"));
          const seen = any.hints;
          assert.ok((await release(held.lease.token)).ok);
          await any.next(seen, HINT_WAIT_MS);
          assert.ok(any.hints > seen, "no hint arrived for the release");
          assert.equal(mine.hints, 0, "held back until the ticket is known");
          mine.setTicket(t);
          assert.equal(mine.hints, 1, "then counted: the release named this ticket");
          assert.equal(mine.named, 1);
          await a.leases.dequeue(t);
        } finally {
          mine.close();
          any.close();
        }
        // Then: the release names the waiter ahead.
        const again = await take();
        assert.ok(again.ok);
        const ahead = a.leases.watch("s");
        const behind = a.leases.watch("s");
        try {
          await live(ahead);
          ahead.setTicket(await a.leases.enqueue("s", 10_000, owner("ahead")));
          behind.awaitTicket();
          const t = await a.leases.enqueue("s", 10_000, owner("behind"));
          const seen = ahead.hints;
          assert.ok((await release(again.lease.token)).ok);
          await ahead.next(seen, HINT_WAIT_MS);
          assert.ok(ahead.hints > seen, "the first in line was woken");
          behind.setTicket(t);
          assert.equal(behind.hints, 0, "the release named the waiter ahead: no hint for this one");
        } finally {
          ahead.close();
          behind.close();
        }
      }));

    test("a hint is not a grant: a waiter woken while someone else holds the scope keeps waiting", () =>
      withTwo("nogrant", async (a, b) => {
        // Another waiter leaving the line sends a hint while the lease is still held.
        const held = await b.leases.acquire({
          scope: "s",
          ttlMs: 10_000,
          owner: owner("holder"),
          ticket: null,
        });
        assert.ok(held.ok);
        const leases = new Leases(a);
        const w = b.leases.watch("s");
        try {
          await live(w);
          const seen = w.hints;
          const waiting = leases.tryAcquire("s", { wait: "1500ms", keepAlive: false });
          const other = await b.leases.enqueue("s", 10_000, owner("other"));
          await b.leases.dequeue(other);
          await w.next(seen, HINT_WAIT_MS);
          assert.ok(w.hints > seen, "leaving the line sent no hint");
          const r = await waiting;
          assert.equal(r.ok, false, "the waiter took a lease that was still held");
          if (!r.ok) assert.equal(r.holder?.token, held.lease.token);
        } finally {
          w.close();
        }
      }));

    test("with every hint dropped, a waiter still gets the lease on its safety poll", async () => {
      process.env.QUIESCE_FAULT_DROP_WAKEUPS = "1";
      try {
        await withTwo("dropped", async (a, b) => {
          const held = await b.leases.acquire({
            scope: "s",
            ttlMs: 10_000,
            owner: owner("holder"),
            ticket: null,
          });
          assert.ok(held.ok);
          const leases = new Leases(a);
          const w = a.leases.watch("s");
          try {
            await live(w);
            const waiting = leases.tryAcquire("s", { wait: "60s", keepAlive: false });
            await new Promise((r) => setTimeout(r, 200)); // in line
            const rel = await b.leases.release({
              ...{ scope: "s", token: held.lease.token, runId: "holder" },
              ...{ host: "test-host", pid: 4242, reason: "done" },
            });
            assert.ok(rel.ok);
            const r = await waiting;
            assert.ok(r.ok, "the waiter did not get the lease");
            assert.equal(r.lease.token, held.lease.token + 1);
            assert.equal(w.hints, 0, "a hint got through although hints are dropped");
            await r.lease.release("test");
          } finally {
            w.close();
          }
        });
      } finally {
        delete process.env.QUIESCE_FAULT_DROP_WAKEUPS;
      }
    });
  });
}
