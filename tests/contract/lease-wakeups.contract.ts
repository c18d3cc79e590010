import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Leases } from "../../src/lease/leases.js";
import { readClock } from "../../src/process/clock.js";
import { openStore } from "../../src/store/open-store.js";
import type { LeaseStore, ScopeWatch, Store } from "../../src/store/store.js";
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

    test("a release by another connection wakes a waiter, and the re-read finds its grant", () =>
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
          const ticket = await a.leases.enqueue("s", 10_000, owner("waiter"), 10_000);
          const seen = w.hints;
          const rel = await b.leases.release({
            ...{ scope: "s", token: held.lease.token, runId: "holder" },
            ...{ host: "test-host", pid: 4242, reason: "done" },
          });
          assert.ok(rel.ok);
          await w.next(seen, HINT_WAIT_MS);
          assert.ok(w.hints > seen, "no hint arrived for the release");
          const p = await a.leases.peek("s", ticket);
          assert.equal(
            p.granted,
            true,
            "the release granted the lease to the waiter first in line",
          );
          assert.equal(p.holder?.owner.runId, "waiter");
          assert.equal(p.holder?.token, held.lease.token + 1);
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
          first.setTicket(await a.leases.enqueue("s", 10_000, owner("first"), 10_000));
          second.setTicket(await a.leases.enqueue("s", 10_000, owner("second"), 10_000));
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
          const t = await a.leases.enqueue("s", 10_000, owner("waiter"), 10_000);
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
          ahead.setTicket(await a.leases.enqueue("s", 10_000, owner("ahead"), 10_000));
          behind.awaitTicket();
          const t = await a.leases.enqueue("s", 10_000, owner("behind"), 10_000);
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
          const other = await b.leases.enqueue("s", 10_000, owner("other"), 10_000);
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

    test("a lease granted at release counts from the grant, not from when the waiter saw it (I4)", () =>
      withTwo("grant-window", async (a, b) => {
        const LATE_MS = 400;
        // The waiter's store, except that every wake-up reaches it LATE_MS late (a starved or
        // stopped process): the grant is then older than any request it sends after the hint.
        const lateLeases = Object.create(a.leases) as LeaseStore;
        lateLeases.watch = (scope: string) => {
          const w = a.leases.watch(scope);
          const lateWatch = Object.create(w) as ScopeWatch;
          lateWatch.next = async (seen: number, ms: number, signal?: AbortSignal) => {
            await w.next(seen, ms, signal);
            await new Promise((r) => setTimeout(r, LATE_MS));
          };
          return lateWatch;
        };
        const late = Object.create(a, { leases: { value: lateLeases } }) as Store;
        const held = await b.leases.acquire({
          scope: "s",
          ttlMs: 10_000,
          owner: owner("holder"),
          ticket: null,
        });
        assert.ok(held.ok);
        const leases = new Leases(late);
        const waiting = leases.tryAcquire("s", { wait: "60s", ttl: "10s", keepAlive: false });
        for (let i = 0; i < 500 && (await b.leases.peek("s", null)).waitersAhead === 0; i++)
          await new Promise((r) => setTimeout(r, 10));
        await new Promise((r) => setTimeout(r, LATE_MS + 100)); // its first (late) wake-up spent
        const rel = await b.leases.release({
          ...{ scope: "s", token: held.lease.token, runId: "holder" },
          ...{ host: "test-host", pid: 4242, reason: "done" },
        });
        assert.ok(rel.ok);
        const r = await waiting;
        assert.ok(r.ok, "the waiter did not get the lease");
        assert.equal(r.lease.token, held.lease.token + 1, "granted at the release");
        const storeNow = await b.now();
        const left = r.lease.validityAt(readClock());
        const sinceGrant = storeNow - r.lease.record.acquiredAt;
        assert.ok(sinceGrant >= LATE_MS - 50, `the grant was only ${sinceGrant} ms old`);
        const budget = r.lease.timing.ttlMs - r.lease.timing.safetyMarginMs;
        assert.ok(
          left <= budget - sinceGrant + 5,
          `${left} ms left of ${budget}, though the grant is ${sinceGrant} ms old: the window started after the lease did`,
        );
        await r.lease.release("test");
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
