import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { EventKind } from "../../src/domain/event.js";
import { isQuiesceError } from "../../src/domain/errors.js";
import type { LeaseOwner } from "../../src/domain/lease.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { Backend } from "../support/backends.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function owner(runId: string, extra: Partial<LeaseOwner> = {}): LeaseOwner {
  return {
    runId,
    system: "quiesce",
    host: "test-host",
    pid: 4242,
    pidStart: "123456",
    bootId: "boot-1",
    childPid: null,
    childPidStart: null,
    command: "true",
    note: null,
    ...extra,
  };
}

/**
 * The Store contract: every backend must pass exactly these tests. Each test gets a fresh,
 * empty store location. Expiry is real time (short TTLs), judged by the store's clock.
 */
export async function defineLeaseStoreContract(backend: Backend): Promise<void> {
  const skip = await backend.skip();

  describe(`Store contract: ${backend.name}`, { skip }, () => {
    async function withStore(tag: string, fn: (store: Store, url: string) => Promise<void>) {
      const loc = backend.prepare(tag);
      const store = await openStore(loc.url);
      try {
        await fn(store, loc.url);
      } finally {
        await store.close();
        await loc.cleanup();
      }
    }
    const acquire = (
      store: Store,
      scope: string,
      runId: string,
      ttlMs = 10_000,
      ticket: number | null = null,
    ) => store.leases.acquire({ scope, ttlMs, owner: owner(runId), ticket });
    const release = (store: Store, scope: string, token: number, runId: string) =>
      store.leases.release({ scope, token, runId, host: "test-host", pid: 4242, reason: "done" });

    test("acquire takes a free scope with token 1 and stores the owner", () =>
      withStore("acq", async (store) => {
        const r = await store.leases.acquire({
          scope: "s",
          ttlMs: 5000,
          owner: owner("r1", { note: "n", childPid: 7 }),
          ticket: null,
        });
        assert.ok(r.ok);
        assert.equal(r.lease.token, 1);
        assert.equal(r.lease.owner.runId, "r1");
        assert.equal(r.lease.owner.note, "n");
        assert.equal(r.lease.owner.childPid, 7);
        assert.equal(r.lease.owner.bootId, "boot-1");
        assert.equal(r.lease.expiresAt - r.lease.heartbeatAt, 5000);
        const got = await store.leases.getLease("s");
        assert.deepEqual(got.lease, r.lease);
      }));

    test("an acquisition logs lease.acquired with the same detail on every backend", () =>
      withStore("acq-event", async (store) => {
        const r = await store.leases.acquire({
          scope: "s",
          ttlMs: 5000,
          owner: owner("r1", { system: "patcher", command: "./patch.sh", note: "n" }),
          ticket: null,
        });
        assert.ok(r.ok);
        const [ev] = (await store.events.list({ scope: "s" })).filter(
          (e) => e.kind === EventKind.LeaseAcquired,
        );
        assert.equal(ev?.token, 1);
        assert.deepEqual(ev?.detail, {
          system: "patcher",
          ttlMs: 5000,
          command: "./patch.sh",
          note: "n",
        });
      }));

    test("listLeases gives the held leases in scope order, each as getLease reads it", () =>
      withStore("list", async (store) => {
        const empty = await store.leases.listLeases();
        assert.deepEqual(empty.leases, []);
        assert.ok(
          Math.abs(empty.now - (await store.now())) < 5_000,
          "an empty listing has a clock",
        );

        // Text a listing must carry through unchanged, whatever the driver does with it.
        const odd = `quote " backslash \\ newline \n tab \t zürich ✓ ${String.fromCodePoint(0x1f600)}`;
        await store.leases.acquire({
          scope: "c:3",
          ttlMs: 60_000,
          owner: owner("r3", { note: odd, command: "sh -c 'echo \"hi\"'", childPid: 9 }),
          ticket: null,
        });
        assert.ok((await acquire(store, "a:1", "r1", 200)).ok);
        assert.ok((await acquire(store, "b:2", "r2")).ok);
        assert.ok(
          (
            await store.leases.release({
              scope: "b:2",
              token: 1,
              runId: "r2",
              host: "test-host",
              pid: 4242,
              reason: "done",
            })
          ).ok,
        );
        await sleep(300);
        const taken = await store.leases.takeOver({
          scope: "a:1",
          staleToken: 1,
          ttlMs: 60_000,
          owner: owner("r4", { system: "backup", pid: null, pidStart: null, bootId: null }),
          ticket: null,
          record: {
            previous: { token: 1, owner: owner("r1"), heartbeatAt: 1, expiresAt: 2 },
            basis: "dead",
            summary: `the owner is gone: ${odd}`,
            probes: [{ probe: "local-process", verdict: "dead", evidence: "pid 4242 is gone" }],
          },
        });
        assert.ok(taken.ok);

        const listed = await store.leases.listLeases();
        assert.deepEqual(
          listed.leases.map((l) => l.scope),
          ["a:1", "c:3"],
          "held only (b:2 was released), in scope order",
        );
        for (const l of listed.leases)
          assert.deepEqual(l, (await store.leases.getLease(l.scope)).lease);
        assert.equal(listed.leases[1]!.owner.note, odd);
        assert.equal(listed.leases[0]!.takeover?.summary, `the owner is gone: ${odd}`);
      }));

    test("a later listing is read afresh: renewed, re-acquired and new leases as getLease reads them", () =>
      withStore("list-again", async (store) => {
        assert.ok((await acquire(store, "a", "r1", 60_000)).ok);
        assert.ok((await acquire(store, "b", "r2", 60_000)).ok);
        const first = await store.leases.listLeases();
        await sleep(20);
        assert.deepEqual(
          (await store.leases.renew([{ scope: "a", token: 1, ttlMs: 60_000 }])).refused.size,
          0,
        );
        const rel = await store.leases.release({
          ...{ scope: "b", token: 1, runId: "r2" },
          ...{ host: "test-host", pid: 4242, reason: "done" },
        });
        assert.ok(rel.ok);
        assert.ok((await acquire(store, "b", "r3", 60_000)).ok);
        assert.ok((await acquire(store, "c", "r4", 60_000)).ok);
        const second = await store.leases.listLeases();
        assert.deepEqual(
          second.leases.map((l) => [l.scope, l.token, l.owner.runId]),
          [
            ["a", 1, "r1"],
            ["b", 2, "r3"],
            ["c", 1, "r4"],
          ],
        );
        for (const l of second.leases)
          assert.deepEqual(l, (await store.leases.getLease(l.scope)).lease);
        const [a1, a2] = [first.leases[0]!, second.leases[0]!];
        assert.ok(
          a2.expiresAt > a1.expiresAt && a2.heartbeatAt > a1.heartbeatAt,
          "the renewal shows",
        );
      }));

    test("a held scope is refused with the holder (I1)", () =>
      withStore("held", async (store) => {
        assert.ok((await acquire(store, "s", "r1")).ok);
        const r = await acquire(store, "s", "r2");
        assert.equal(r.ok, false);
        assert.ok(
          !r.ok && r.reason === "held" && r.holder?.owner.runId === "r1" && r.holder.token === 1,
        );
      }));

    test("tokens keep increasing across releases and are never reused (I2)", () =>
      withStore("tokens", async (store) => {
        const seen: number[] = [];
        for (let i = 0; i < 5; i++) {
          const r = await acquire(store, "s", `r${i}`);
          assert.ok(r.ok);
          seen.push(r.lease.token);
          const rel = await store.leases.release({
            scope: "s",
            token: r.lease.token,
            runId: `r${i}`,
            host: "h",
            pid: 1,
            reason: "done",
          });
          assert.ok(rel.ok);
        }
        assert.deepEqual(seen, [1, 2, 3, 4, 5]);
        assert.equal((await store.leases.getLease("s")).lease, null);
      }));

    test("a stale token cannot release its successor's lease", () =>
      withStore("fenced-release", async (store) => {
        const a = await acquire(store, "s", "a");
        assert.ok(a.ok);
        assert.ok(
          (
            await store.leases.release({
              scope: "s",
              token: 1,
              runId: "a",
              host: "h",
              pid: 1,
              reason: "x",
            })
          ).ok,
        );
        const b = await acquire(store, "s", "b");
        assert.ok(b.ok && b.lease.token === 2);
        const late = await store.leases.release({
          scope: "s",
          token: 1,
          runId: "a",
          host: "h",
          pid: 1,
          reason: "zombie",
        });
        assert.ok(!late.ok && late.reason === "token_mismatch" && late.current?.token === 2);
        assert.equal((await store.leases.getLease("s")).lease?.owner.runId, "b");
        const ev = await store.events.list({ scope: "s" });
        assert.ok(ev.some((e) => e.kind === EventKind.LeaseReleaseRejected && e.token === 1));
      }));

    test("renew extends every current lease in one call and skips stale ones", () =>
      withStore("renew", async (store) => {
        for (const s of ["a", "b", "c"]) assert.ok((await acquire(store, s, s, 1000)).ok);
        const before = (await store.leases.getLease("a")).lease!;
        const cBefore = (await store.leases.getLease("c")).lease!;
        await sleep(30);
        const r = await store.leases.renew([
          { scope: "a", token: 1, ttlMs: 60_000 },
          { scope: "b", token: 1, ttlMs: 60_000 },
          { scope: "c", token: 99, ttlMs: 60_000 },
          { scope: "nope", token: 1, ttlMs: 60_000 },
        ]);
        assert.deepEqual(
          [...r.refused].sort(),
          ["c", "nope"],
          "only the stale and unknown ones are refused",
        );
        const after = (await store.leases.getLease("a")).lease!;
        assert.ok(after.heartbeatAt > before.heartbeatAt);
        assert.equal(after.expiresAt - after.heartbeatAt, 60_000);
        assert.deepEqual(
          (await store.leases.getLease("c")).lease,
          cBefore,
          "a stale token renews nothing",
        );
      }));

    test("renewing a thousand leases is one call", () =>
      withStore("renew-many", async (store) => {
        const items = [];
        for (let i = 0; i < 1000; i++) {
          const r = await acquire(store, `s${i}`, `r${i}`, 30_000);
          assert.ok(r.ok);
          items.push({ scope: `s${i}`, token: r.lease.token, ttlMs: 30_000 });
        }
        const before = (await store.leases.getLease("s999")).lease!;
        await sleep(5);
        const r = await store.leases.renew(items);
        assert.equal(r.refused.size, 0);
        assert.ok(
          (await store.leases.getLease("s999")).lease!.heartbeatAt > before.heartbeatAt,
          "the last one was renewed too",
        );
        items[500] = { ...items[500]!, token: 77 };
        assert.deepEqual(
          [...(await store.leases.renew(items)).refused],
          ["s500"],
          "one stale token among 1000 is named",
        );
      }));

    test("an expired lease blocks acquisition, is reported once, and refuses renew, release and writes", () =>
      withStore("expiry", async (store) => {
        assert.ok((await acquire(store, "s", "r1", 200)).ok);
        await sleep(300);
        const r = await acquire(store, "s", "r2");
        assert.ok(!r.ok && r.reason === "expired" && r.holder?.owner.runId === "r1");
        await acquire(store, "s", "r3");
        await store.leases.noteExpiry("s", 1);
        const expiredEvents = (await store.events.list({ scope: "s" })).filter(
          (e) => e.kind === EventKind.LeaseExpired,
        );
        assert.equal(expiredEvents.length, 1, "the expiry is logged once per token");
        // Both stores word it alike: durations as formatDuration writes them (a few hundred ms
        // here, seconds on a slow machine), never a bare number and " ms".
        const d = String.raw`(?:\d+ms|\d+(?:\.\d+)?s)`;
        assert.match(
          expiredEvents[0]!.message,
          new RegExp(
            `^lease expired ${d} ago without being released \\(last heartbeat ${d} ago\\)$`,
          ),
        );
        assert.deepEqual(
          [...(await store.leases.renew([{ scope: "s", token: 1, ttlMs: 5000 }])).refused],
          ["s"],
        );

        const rel = await store.leases.release({
          scope: "s",
          token: 1,
          runId: "r1",
          host: "h",
          pid: 1,
          reason: "late",
        });
        assert.ok(!rel.ok && rel.reason === "expired");
        const put = await store.leases.putState("s", 1, "k", "v");
        assert.ok(!put.ok && put.reason === "expired");
        const child = await store.leases.setChild("s", 1, 99, null);
        assert.ok(!child.ok && child.reason === "expired");
        assert.equal(
          (await store.leases.getLease("s")).lease?.token,
          1,
          "nothing deleted the expired lease",
        );
      }));

    test("fenced state writes succeed only under the current token (I3)", () =>
      withStore("state", async (store) => {
        assert.ok((await acquire(store, "s", "r1")).ok);
        assert.ok((await store.leases.putState("s", 1, "step", "1")).ok);
        const stale = await store.leases.putState("s", 7, "step", "bogus");
        assert.ok(!stale.ok && stale.reason === "token_mismatch");
        assert.ok(
          (
            await store.leases.release({
              scope: "s",
              token: 1,
              runId: "r1",
              host: "h",
              pid: 1,
              reason: "x",
            })
          ).ok,
        );
        const released = await store.leases.putState("s", 1, "step", "late");
        assert.ok(!released.ok && released.reason === "not_held");
        assert.ok((await acquire(store, "s", "r2")).ok);
        assert.ok((await store.leases.putState("s", 2, "step", "2")).ok);
        const zombie = await store.leases.putState("s", 1, "step", "zombie");
        assert.ok(!zombie.ok && zombie.reason === "token_mismatch");
        const state = await store.leases.getState("s");
        assert.deepEqual(
          state.map((e) => [e.key, e.value, e.token]),
          [["step", "2", 2]],
        );
        assert.ok((await store.leases.setChild("s", 2, 1234, "55")).ok);
        assert.equal((await store.leases.getLease("s")).lease?.owner.childPid, 1234);
        assert.equal((await store.leases.setChild("s", 1, 1, null)).ok, false);
      }));

    test("concurrent acquisitions from separate connections: exactly one wins", () =>
      withStore("race", async (_store, url) => {
        const stores = await Promise.all(Array.from({ length: 8 }, () => openStore(url)));
        try {
          // A new scope each round: the first acquisitions of a scope race to insert its row,
          // which must end as one winner and refusals, never an error (on PostgreSQL, a unique
          // index beside the primary key once made a loser fail instead; see pg-acquisitions).
          for (let round = 0; round < 100; round++) {
            const scope = `hot-${round}`;
            const results = await Promise.all(stores.map((s, i) => acquire(s, scope, `r${i}`)));
            assert.equal(results.filter((r) => r.ok).length, 1, `round ${round}: one winner`);
            for (const r of results) if (!r.ok) assert.equal(r.reason, "held");
          }
        } finally {
          await Promise.all(stores.map((s) => s.close()));
        }
      }));

    test("a waiter leaving the line as the release comes never keeps a grant (separate connections)", () =>
      withStore("leave-race", async (_store, url) => {
        const [holderConn, waiterConn] = await Promise.all([openStore(url), openStore(url)]);
        try {
          for (let i = 0; i < 30; i++) {
            const scope = `race-${i}`;
            const held = await acquire(holderConn, scope, "holder");
            assert.ok(held.ok);
            const t = await waiterConn.leases.enqueue(scope, 5000, owner("leaving"), 10_000);
            // Either order: the release first (a grant, handed back) or the leaving first.
            const [rel] = await Promise.all([
              release(holderConn, scope, held.lease.token, "holder"),
              waiterConn.leases.dequeue(t),
            ]);
            assert.ok(rel.ok);
            const p = await holderConn.leases.peek(scope, t);
            assert.ok(p.free, `round ${i}: the lease was left with a waiter that had gone`);
          }
        } finally {
          await holderConn.close();
          await waiterConn.close();
        }
      }));

    test("the wait queue hands a free scope to the oldest live ticket", () =>
      withStore("queue", async (store) => {
        // Free with tickets in line (no release to grant it): nobody may jump the line.
        assert.ok((await acquire(store, "s", "before")).ok);
        assert.ok((await release(store, "s", 1, "before")).ok);
        const t1 = await store.leases.enqueue("s", 5000, owner("t1"), 10_000);
        const t2 = await store.leases.enqueue("s", 5000, owner("t2"), 10_000);
        assert.ok(t2 > t1);
        assert.deepEqual(
          [
            (await store.leases.peek("s", t1)).waitersAhead,
            (await store.leases.peek("s", t2)).waitersAhead,
            (await store.leases.peek("s", null)).waitersAhead,
          ],
          [0, 1, 2],
        );
        const p = await store.leases.peek("s", t2);
        assert.ok(p.free && p.waitersAhead === 1 && !p.granted);
        const jump = await acquire(store, "s", "t2", 10_000, t2);
        assert.ok(!jump.ok && jump.reason === "queued", "a later ticket cannot jump the line");
        const noTicket = await acquire(store, "s", "x");
        assert.ok(
          !noTicket.ok && noTicket.reason === "queued",
          "nor can a caller without a ticket",
        );
        const first = await acquire(store, "s", "t1", 10_000, t1);
        assert.ok(first.ok, "the oldest ticket gets it");
        assert.equal(first.lease.token, 2, "the counter outlived the released lease (I2)");
        assert.equal(
          (await store.leases.peek("s", t2)).waitersAhead,
          0,
          "the winner's ticket left the queue",
        );
      }));

    test("a release hands the lease to the oldest live ticket in the same commit", () =>
      withStore("grant", async (store) => {
        const held = await acquire(store, "s", "holder");
        assert.ok(held.ok);
        const dead = await store.leases.enqueue("s", 100, owner("dead"), 10_000);
        const t1 = await store.leases.enqueue("s", 5000, owner("t1", { note: "n1" }), 7000);
        const t2 = await store.leases.enqueue("s", 5000, owner("t2"), 10_000);
        await sleep(200); // the first ticket runs out: it is skipped, and purged
        const before = await store.leases.peek("s", t1);
        assert.ok((await release(store, "s", 1, "holder")).ok);
        const mine = await store.leases.peek("s", t1);
        assert.equal(mine.granted, true, "the oldest live ticket was granted the lease");
        assert.equal(mine.free, false);
        const lease = mine.holder!;
        assert.equal(lease.token, 2, "a grant is an acquisition: the next token (I2)");
        assert.equal(lease.owner.runId, "t1");
        assert.equal(lease.owner.note, "n1");
        assert.equal(lease.owner.pidStart, "123456", "the whole owner came with the ticket");
        assert.equal(lease.ttlMs, 7000, "for the TTL the ticket asked for");
        assert.ok(lease.acquiredAt >= before.now && lease.acquiredAt <= mine.now);
        assert.equal(lease.expiresAt, lease.acquiredAt + 7000);
        const other = await store.leases.peek("s", t2);
        assert.ok(!other.granted && other.waitersAhead === 0, "the grantee left the line");
        assert.equal((await store.leases.peek("s", null)).waitersAhead, 1, "only t2 waits");
        assert.equal(await store.leases.refreshTicket(dead, 1000), false, "the dead one purged");
        const jump = await acquire(store, "s", "t2", 10_000, t2);
        assert.ok(!jump.ok && jump.reason === "held", "the granted lease is held (I1)");
        const log = await store.events.list({ scope: "s" });
        assert.deepEqual(
          log.slice(-2).map((e) => [e.kind, e.token, e.runId]),
          [
            [EventKind.LeaseReleased, 1, "holder"],
            [EventKind.LeaseAcquired, 2, "t1"],
          ],
          "the release, then the grant, in the log",
        );
        assert.match(
          log.at(-1)!.message,
          /^acquired with token 2 for 7s \(handed over by the release of token 1\)$/,
        );
        // A late release of the old token is refused and changes nothing.
        assert.ok(!(await release(store, "s", 1, "holder")).ok);
        assert.equal((await store.leases.peek("s", t1)).holder?.token, 2);
        // The grantee releases like any holder, and grants on to the next.
        assert.ok((await release(store, "s", 2, "t1")).ok);
        const next = await store.leases.peek("s", t2);
        assert.ok(next.granted && next.holder?.token === 3 && next.holder.owner.runId === "t2");
        assert.equal((await store.leases.peek("s", t1)).granted, false, "t1's grant ended");
      }));

    test("a waiter leaving the line hands back a lease granted to it", () =>
      withStore("hand-back", async (store) => {
        assert.ok((await acquire(store, "s", "holder")).ok);
        const t = await store.leases.enqueue("s", 5000, owner("gave-up"), 10_000);
        assert.ok((await release(store, "s", 1, "holder")).ok);
        assert.equal((await store.leases.peek("s", t)).granted, true);
        await store.leases.dequeue(t);
        const after = await store.leases.peek("s", t);
        assert.ok(after.free && !after.granted, "nobody holds a grant its waiter will not use");
        const log = await store.events.list({ scope: "s" });
        assert.equal(log.at(-1)!.kind, EventKind.LeaseReleased);
        assert.equal(log.at(-1)!.token, 2);
        assert.equal(log.at(-1)!.runId, "gave-up");
        const again = await acquire(store, "s", "next");
        assert.ok(again.ok && again.lease.token === 3, "the counter kept (I2)");
        // Leaving again (nothing left to delete) touches nobody's lease.
        await store.leases.dequeue(t);
        assert.equal((await store.leases.getLease("s")).lease?.token, 3);
      }));

    test("a release with no live ticket frees the scope, and a refused one grants nothing", () =>
      withStore("no-grant", async (store) => {
        assert.ok((await acquire(store, "s", "holder", 300)).ok);
        const t = await store.leases.enqueue("s", 5000, owner("w"), 10_000);
        assert.ok(!(await release(store, "s", 7, "zombie")).ok, "wrong token");
        await sleep(400);
        assert.ok(!(await release(store, "s", 1, "holder")).ok, "expired");
        const p = await store.leases.peek("s", t);
        assert.ok(!p.granted && p.holder?.token === 1, "still the expired lease, not granted");
        await store.leases.dequeue(t);
        assert.equal((await store.leases.getLease("s")).lease?.token, 1, "and left alone");
        assert.ok((await acquire(store, "t", "x")).ok);
        assert.ok((await release(store, "t", 1, "x")).ok);
        assert.ok((await store.leases.peek("t", null)).free, "nobody waiting: simply free");
      }));

    test("a refused acquisition that asks to queue comes back with its place in line", () =>
      withStore("queue-on-refusal", async (store) => {
        const ask = (runId: string) =>
          store.leases.acquire({
            scope: "s",
            ttlMs: 10_000,
            owner: owner(runId),
            ticket: null,
            queueTtlMs: 5000,
          });
        const won = await ask("holder");
        assert.ok(won.ok, "a free scope is simply acquired");
        assert.equal((await store.leases.peek("s", null)).waitersAhead, 0, "and no ticket taken");
        const a = await ask("a");
        const b = await ask("b");
        assert.ok(!a.ok && !b.ok && a.reason === "held" && b.reason === "held");
        assert.ok(a.ticket !== undefined && b.ticket !== undefined && b.ticket > a.ticket);
        assert.deepEqual([a.waitersAhead, b.waitersAhead], [0, 1], "counted before its own ticket");
        assert.equal((await store.leases.peek("s", b.ticket)).waitersAhead, 1);
        const rel = await store.leases.release({
          ...{ scope: "s", token: won.lease.token, runId: "holder" },
          ...{ host: "test-host", pid: 4242, reason: "done" },
        });
        assert.ok(rel.ok);
        const first = await store.leases.peek("s", a.ticket);
        assert.ok(first.granted, "the first ticket was granted the lease by the release");
        assert.equal(
          first.holder?.owner.runId,
          "a",
          "the ticket taken with the refusal has its owner",
        );
        assert.equal(first.holder?.ttlMs, 10_000, "and the TTL asked for");
        const jump = await acquire(store, "s", "b", 10_000, b.ticket);
        assert.ok(!jump.ok && jump.reason === "held", "the second ticket cannot take it");
        assert.equal((await store.leases.peek("s", b.ticket)).waitersAhead, 0);
      }));

    test("a ticket that is not refreshed stops blocking the line", () =>
      withStore("queue-ttl", async (store) => {
        const dead = await store.leases.enqueue("s", 150, owner("w"), 10_000);
        const live = await store.leases.enqueue("s", 5000, owner("w"), 10_000);
        assert.equal((await store.leases.peek("s", live)).waitersAhead, 1);
        await sleep(250);
        assert.equal((await store.leases.peek("s", live)).waitersAhead, 0);
        assert.ok((await acquire(store, "s", "live", 1000, live)).ok);
        assert.equal(
          await store.leases.refreshTicket(dead, 1000),
          false,
          "the dead ticket was purged",
        );
      }));

    test("events can be filtered by scope, age and id", () =>
      withStore("events", async (store) => {
        assert.ok((await acquire(store, "a", "r1")).ok);
        assert.ok((await acquire(store, "b", "r2")).ok);
        await store.events.record({
          kind: EventKind.LeaseLost,
          scope: "a",
          token: 1,
          runId: "r1",
          host: "h",
          pid: 5,
          message: "lost it",
          detail: { why: "test" },
        });
        const all = await store.events.list({});
        assert.deepEqual(
          all.map((e) => e.kind),
          ["lease.acquired", "lease.acquired", "lease.lost"],
        );
        const a = await store.events.list({ scope: "a" });
        assert.equal(a.length, 2);
        assert.deepEqual(a[1]!.detail, { why: "test" });
        const after = await store.events.list({ afterId: all[1]!.id });
        assert.equal(after.length, 1);
        const now = await store.now();
        assert.equal((await store.events.list({ since: now + 60_000 })).length, 0);
        assert.equal(
          (await store.events.list({ limit: 1 }))[0]!.kind,
          "lease.lost",
          "limit keeps the newest",
        );
      }));

    test("many processes opening a new store at once all migrate safely", async () => {
      const loc = backend.prepare("migrate");
      try {
        const stores = await Promise.all(Array.from({ length: 6 }, () => openStore(loc.url)));
        const infos = await Promise.all(stores.map((s) => s.info()));
        for (const i of infos) assert.equal(i.schemaVersion, i.latestSchemaVersion);
        assert.equal(new Set(infos.map((i) => i.storeId)).size, 1);
        await Promise.all(stores.map((s) => s.close()));
      } finally {
        await loc.cleanup();
      }
    });

    test("a schema newer than this binary is refused", async () => {
      const loc = backend.prepare("too-new");
      try {
        await (await openStore(loc.url)).close();
        await backend.rawSql(
          loc.url,
          "UPDATE quiesce_meta SET value = '999' WHERE key = 'schema_version'",
        );
        await assert.rejects(
          openStore(loc.url),
          (e) => isQuiesceError(e, "SCHEMA_TOO_NEW") && /999/.test(e.message),
        );
      } finally {
        await loc.cleanup();
      }
    });

    test("the store clock is what leases are judged by (I10)", () =>
      withStore("clock", async (store) => {
        const now = await store.now();
        const r = await acquire(store, "s", "r1", 5000);
        assert.ok(r.ok);
        assert.ok(r.lease.acquiredAt >= now && r.lease.acquiredAt - now < 5000);
        assert.equal(r.now, r.lease.acquiredAt);
      }));
  });
}
