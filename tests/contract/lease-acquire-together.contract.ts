import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { openStore } from "../../src/store/open-store.js";
import type { AcquireOutcome, Store } from "../../src/store/store.js";
import type { Backend } from "../support/backends.js";
import { countNamedStatements } from "../support/pg.js";
import { owner } from "./lease-store.contract.js";

/**
 * Acquisitions made at the same moment in one process (a wave starting its hosts): PostgreSQL
 * decides them in one statement. Each must come out as it would alone: free scopes are won
 * with the next token and one `lease.acquired` each, held and expired ones are refused naming
 * their holder, the line is respected (a ticket ahead refuses, a head ticket wins and leaves
 * the line), a refusal that asks for a place in line gets one, and the same scope asked twice
 * has one winner.
 */
export async function defineLeaseAcquireTogetherContract(backend: Backend): Promise<void> {
  const skip = await backend.skip();

  describe(`Acquisitions together contract: ${backend.name}`, { skip }, () => {
    test("acquisitions made together are each decided as alone", async () => {
      const loc = backend.prepare("acquire-together");
      const store: Store = await openStore(loc.url);
      const x = owner("r-x");
      const take = async (scope: string, ttlMs = 60_000, who = x) => {
        const r = await store.leases.acquire({ scope, ttlMs, owner: who, ticket: null });
        assert.ok(r.ok, `${scope} taken for the setup`);
        return r.lease;
      };
      try {
        const held = await take("t:held");
        await take("t:expired", 200);
        const released = await take("t:released");
        const rel = await store.leases.release({
          scope: "t:released",
          token: released.token,
          runId: "r-x",
          host: "test-host",
          pid: 4242,
          reason: "done",
        });
        assert.ok(rel.ok);
        const aheadTicket = await store.leases.enqueue("t:behind", 30_000, owner("r-y"), 60_000);
        const myTicket = await store.leases.enqueue("t:mine", 30_000, owner("r-t"), 60_000);
        await take("t:line");
        await store.leases.enqueue("t:line", 30_000, owner("r-y"), 60_000);
        await new Promise((r) => setTimeout(r, 300)); // t:expired is past its expiry

        const asked: [string, string, number | null, number | undefined][] = [
          ["t:free1", "r-1", null, undefined],
          ["t:held", "r-2", null, undefined],
          ["t:free2", "r-3", null, undefined],
          ["t:expired", "r-4", null, undefined],
          ["t:released", "r-5", null, undefined],
          ["t:behind", "r-6", null, undefined],
          ["t:mine", "r-t", myTicket, undefined],
          ["t:line", "r-7", null, 30_000],
          ["t:dup", "r-8", null, undefined],
          ["t:dup", "r-9", null, undefined],
        ];
        const statements = countNamedStatements();
        let out: AcquireOutcome[];
        try {
          out = await Promise.all(
            asked.map(([scope, runId, ticket, queueTtlMs]) =>
              store.leases.acquire({
                scope,
                ttlMs: 60_000,
                owner: owner(runId),
                ticket,
                ...(queueTtlMs !== undefined ? { queueTtlMs } : {}),
              }),
            ),
          );
        } finally {
          statements.stop();
        }
        if (backend.name === "postgres")
          assert.ok(
            statements.named("quiesce_acquire_many") >= 1,
            "the acquisitions went together (ACQUIRE_MANY), so this test tried that statement",
          );
        const by = (i: number) => out[i]!;
        const won = (i: number) => {
          const r = by(i);
          assert.ok(r.ok, `${asked[i]![0]} (${asked[i]![1]}) is won`);
          assert.equal(r.lease.owner.runId, asked[i]![1]);
          return r.lease;
        };
        const refused = (i: number) => {
          const r = by(i);
          assert.ok(!r.ok, `${asked[i]![0]} (${asked[i]![1]}) is refused`);
          return r;
        };
        assert.equal(won(0).token, 1);
        assert.equal(won(2).token, 1);
        assert.equal(won(4).token, released.token + 1, "a released scope's next token");
        const h = refused(1);
        assert.equal(h.reason, "held");
        assert.equal(h.holder?.token, held.token);
        assert.equal(h.holder?.owner.runId, "r-x");
        assert.equal(h.ticket, undefined, "no place in line unless asked");
        const e = refused(3);
        assert.equal(e.reason, "expired");
        assert.equal(e.holder?.owner.runId, "r-x");
        const q = refused(5);
        assert.equal(q.reason, "queued", "a free scope with a ticket ahead");
        assert.equal(q.holder, null);
        assert.equal(q.waitersAhead, 1);
        assert.equal(won(6).token, 1, "the ticket first in line wins a free scope");
        const l = refused(7);
        assert.equal(l.reason, "held");
        assert.equal(l.waitersAhead, 1);
        assert.ok(l.ticket !== undefined, "a refusal that asked for a place in line has one");
        const dup = [by(8), by(9)];
        assert.equal(dup.filter((r) => r.ok).length, 1, "one winner for a scope asked twice");
        const loser = dup.find((r) => !r.ok)!;
        assert.ok(!loser.ok && loser.reason === "held");

        // What the store kept: the winners' leases and events, the line.
        for (const i of [0, 2, 4, 6]) {
          const [scope, runId] = asked[i]!;
          const got = (await store.leases.getLease(scope)).lease!;
          assert.equal(got.owner.runId, runId, `${scope} is held by its winner`);
          const acquired = await store.events.list({ scope, kinds: ["lease.acquired"] });
          assert.equal(acquired.at(-1)?.runId, runId);
          assert.match(acquired.at(-1)!.message, new RegExp(`^acquired with token ${got.token} `));
        }
        assert.equal((await store.leases.getLease("t:held")).lease!.owner.runId, "r-x");
        assert.equal((await store.leases.getLease("t:behind")).lease, null);
        const mine = await store.leases.peek("t:mine", myTicket);
        assert.equal(mine.waitersAhead, 0);
        const behind = await store.leases.peek("t:behind", null);
        assert.equal(behind.waitersAhead, 1, `ticket ${aheadTicket} still waits`);
        const line = await store.leases.peek("t:line", l.ok ? null : (l.ticket ?? null));
        assert.equal(line.waitersAhead, 1, "the new place is behind the one already there");
      } finally {
        await store.close();
        await loc.cleanup();
      }
    });

    test("two agents acquiring the same scopes together, in opposite orders: one winner each, no deadlock", async () => {
      const loc = backend.prepare("acquire-together-race");
      const a: Store = await openStore(loc.url);
      const b: Store = await openStore(loc.url);
      try {
        const scopes = Array.from({ length: 200 }, (_, i) => `race:${String(i).padStart(3, "0")}`);
        for (let round = 0; round < 5; round++) {
          const ask = (s: Store, who: string, order: string[]) =>
            Promise.all(
              order.map((scope) =>
                s.leases.acquire({
                  scope: `${scope}:${round}`,
                  ttlMs: 60_000,
                  owner: owner(`${who}-${round}`),
                  ticket: null,
                }),
              ),
            );
          const [fromA, fromB] = await Promise.all([
            ask(a, "a", scopes),
            ask(b, "b", [...scopes].reverse()),
          ]);
          const byScope = new Map<string, number>();
          for (const r of [...fromA, ...fromB]) {
            if (r.ok) byScope.set(r.lease.scope, (byScope.get(r.lease.scope) ?? 0) + 1);
            else assert.equal(r.reason, "held", "the loser is refused by the winner's lease");
          }
          assert.equal(byScope.size, scopes.length, "every scope has a winner");
          assert.ok(
            [...byScope.values()].every((n) => n === 1),
            "and only one",
          );
          for (const scope of scopes) {
            const got = (await a.leases.getLease(`${scope}:${round}`)).lease!;
            const winner = [...fromA, ...fromB].find(
              (r) => r.ok && r.lease.scope === `${scope}:${round}`,
            );
            assert.ok(winner?.ok);
            assert.equal(got.owner.runId, winner.lease.owner.runId, "the store agrees");
            assert.equal(got.token, 1);
          }
        }
      } finally {
        await a.close();
        await b.close();
        await loc.cleanup();
      }
    });
  });
}
