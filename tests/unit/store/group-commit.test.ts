import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { GroupCommit, MAX_BATCH } from "../../../src/store/group-commit.js";
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
    let done = false;
    const p = g.submit(w(1)).then(() => (done = true));
    await tick();
    await tick();
    assert.equal(done, false, "not resolved while the commit is in flight");
    s.commit();
    await p;
    assert.equal(done, true);
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
});
