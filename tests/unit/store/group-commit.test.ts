import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ErrorCode, QuiesceError } from "../../../src/domain/errors.js";
import { GroupCommit, MAX_BATCH, YIELD_EVERY_MS } from "../../../src/store/group-commit.js";
import type {
  JournalResult,
  JournalStore,
  JournalWrite,
} from "../../../src/store/journal-store.js";

/** A journal store whose apply() the test controls: records batches, resolves on demand. */
class GateStore {
  batches: JournalWrite[][] = [];
  pending: { resolve: (r: JournalResult[]) => void; reject: (e: unknown) => void; n: number }[] =
    [];
  apply(writes: readonly JournalWrite[]): Promise<JournalResult[]> {
    this.batches.push([...writes]);
    return new Promise((resolve, reject) =>
      this.pending.push({ resolve, reject, n: writes.length }),
    );
  }
  commit(): void {
    const p = this.pending.shift()!;
    p.resolve(Array.from({ length: p.n }, () => ({ ok: true as const, now: 1 })));
  }
  fail(e: Error): void {
    this.pending.shift()!.reject(e);
  }
  asStore(): JournalStore {
    return this as unknown as JournalStore;
  }
}

const w = (i: number): JournalWrite => ({
  kind: "create_run",
  token: 1,
  run: { runId: `run-${i}`, runtimeId: "rt", scope: "runtime:rt", checkpoint: null },
});
const tick = () => new Promise((r) => setImmediate(r));

/** I8: `write` stays unresolved while its commit is in flight, and resolves once it returned. */
async function resolvesOnlyAfterCommit(s: GateStore, write: Promise<unknown>): Promise<void> {
  let done = false;
  const p = write.then(() => (done = true));
  await tick();
  await tick();
  assert.equal(done, false, "not resolved while the commit is in flight");
  s.commit();
  await p;
  assert.equal(done, true);
}

describe("GroupCommit", () => {
  test("writes issued in the same turn share one commit", async () => {
    const s = new GateStore();
    const g = new GroupCommit(s.asStore());
    const all = Promise.all([0, 1, 2, 3].map((i) => g.submit(w(i))));
    await tick();
    assert.equal(s.batches.length, 1);
    assert.equal(s.batches[0]!.length, 4);
    s.commit();
    assert.ok((await all).every((r) => r.ok));
    assert.deepEqual([g.commits, g.writes], [1, 4]);
  });

  test("a write resolves only after the commit holding it returned (I8)", async () => {
    const s = new GateStore();
    const g = new GroupCommit(s.asStore());
    await resolvesOnlyAfterCommit(s, g.submit(w(1)));
  });

  test("writes arriving during a commit go together into the next one", async () => {
    const s = new GateStore();
    const g = new GroupCommit(s.asStore());
    const first = g.submit(w(0));
    await tick();
    const later = [1, 2, 3].map((i) => g.submit(w(i)));
    await tick();
    assert.equal(s.batches.length, 1, "no second commit while the first is in flight");
    s.commit();
    await first;
    await tick();
    assert.equal(s.batches.length, 2);
    assert.equal(s.batches[1]!.length, 3);
    s.commit();
    await Promise.all(later);
  });

  test("a failed commit rejects every write it carried; the next batch still goes", async () => {
    const s = new GateStore();
    const g = new GroupCommit(s.asStore());
    const a = g.submit(w(0));
    const b = g.submit(w(1));
    await tick();
    s.fail(new Error("disk full"));
    await assert.rejects(a, /disk full/);
    await assert.rejects(b, /disk full/);
    const c = g.submit(w(2));
    await tick();
    s.commit();
    assert.ok((await c).ok);
  });

  test(`a burst larger than ${MAX_BATCH} takes several commits`, async () => {
    const s = new GateStore();
    const g = new GroupCommit(s.asStore());
    const all = Promise.all(Array.from({ length: MAX_BATCH + 5 }, (_, i) => g.submit(w(i))));
    await tick();
    s.commit();
    await tick();
    await tick();
    assert.deepEqual(
      s.batches.map((b) => b.length),
      [MAX_BATCH, 5],
    );
    s.commit();
    assert.equal((await all).length, MAX_BATCH + 5);
  });
  test("a lone writer's next write is committed without waiting for an event-loop turn", async () => {
    const s = new GateStore();
    const g = new GroupCommit(s.asStore());
    const first = g.submit(w(0));
    await tick();
    s.commit();
    await first;
    // Nothing else wrote while the first commit was made: the next write needs no gathering.
    const second = g.submit(w(1));
    for (let i = 0; i < 5 && s.batches.length < 2; i++) await Promise.resolve();
    assert.equal(s.batches.length, 2, "committed within microtasks, before any setImmediate");
    // I8 on this path too: the write resolves only once its commit returned.
    await resolvesOnlyAfterCommit(s, second);
  });

  test("writers that met during a commit keep waiting a turn for each other", async () => {
    const s = new GateStore();
    const g = new GroupCommit(s.asStore());
    const a = g.submit(w(0));
    await tick();
    const b = g.submit(w(1)); // arrives while a's commit is in flight: not a lone writer
    s.commit();
    await a;
    const c = g.submit(w(2)); // a's writer again, in the same turn as b's commit is scheduled
    await tick();
    assert.deepEqual(
      s.batches.map((x) => x.length),
      [1, 2],
      "b and c share one commit",
    );
    s.commit();
    await Promise.all([b, c]);
  });

  test(`a lone writer still gives the event loop a turn every ${YIELD_EVERY_MS} ms`, async () => {
    // A store that commits at once and takes 0.2 ms of CPU to do it: a run whose provider
    // answers at once would otherwise never let a timer (the lease heartbeat) fire.
    const spin: JournalStore = {
      apply: (ws: readonly JournalWrite[]) => {
        const until = performance.now() + 0.2;
        while (performance.now() < until);
        return Promise.resolve(ws.map(() => ({ ok: true as const, now: 1 })));
      },
    } as unknown as JournalStore;
    const g = new GroupCommit(spin);
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    const start = performance.now();
    let i = 0;
    while (performance.now() - start < 20 * YIELD_EVERY_MS) await g.submit(w(i++));
    clearInterval(timer);
    assert.ok(i > 50, `many writes went through (${i})`);
    assert.ok(turns >= 3, `timers fired ${turns} times during ${i} lone writes`);
  });

  describe("a commit that could not reach the store", () => {
    const storeDown = (unsent: boolean) =>
      new QuiesceError(ErrorCode.STORE_UNAVAILABLE, "cannot reach the store", {
        details: { transient: true, unsent },
      });
    /** A store that fails its first `failures` applies with `error`, then commits. */
    const flaky = (failures: number, error: Error) => {
      const s = { attempts: [] as number[], calls: 0 };
      const store = {
        apply: (ws: readonly JournalWrite[]) => {
          s.calls++;
          s.attempts.push(ws.length);
          return s.calls <= failures
            ? Promise.reject(error)
            : Promise.resolve(ws.map(() => ({ ok: true as const, now: 1 })));
        },
      } as unknown as JournalStore;
      return { s, store };
    };
    const budget = (ms: number) => {
      const until = performance.now() + ms;
      return { remainingMs: () => Math.max(0, until - performance.now()) };
    };

    test("is sent again, the same writes in the same commit, while the budget lasts", async () => {
      const { s, store } = flaky(3, storeDown(true));
      const g = new GroupCommit(store, budget(5_000));
      const rs = await Promise.all([g.submit(w(1)), g.submit(w(2))]);
      assert.ok(rs.every((r) => r.ok));
      assert.deepEqual(s.attempts, [2, 2, 2, 2]);
      assert.deepEqual([g.commits, g.writes, g.retries], [1, 2, 3]);
    });

    test("fails once the budget is spent (the lease is no longer surely ours)", async () => {
      const down = storeDown(true);
      const { s, store } = flaky(Infinity, down);
      const g = new GroupCommit(store, budget(300));
      await assert.rejects(g.submit(w(1)), (e) => e === down);
      assert.ok(s.calls >= 2 && s.calls < 10, `tried ${s.calls} times in 300 ms`);
    });

    test("is never sent again when it may have reached the store (it may have committed)", async () => {
      const maybeSent = storeDown(false);
      const { s, store } = flaky(1, maybeSent);
      const g = new GroupCommit(store, budget(5_000));
      await assert.rejects(g.submit(w(1)), (e) => e === maybeSent);
      assert.equal(s.calls, 1);
    });

    test("is never sent again without a budget", async () => {
      const { s, store } = flaky(1, storeDown(true));
      const g = new GroupCommit(store);
      await assert.rejects(g.submit(w(1)), /cannot reach the store/);
      assert.equal(s.calls, 1);
    });
  });
});
