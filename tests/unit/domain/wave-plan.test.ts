import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  haltReason,
  nextToStart,
  passOutcome,
  planBatch,
  remainingHosts,
  type PlannedHost,
} from "../../../src/domain/wave-plan.js";
import { countHosts, type HostState } from "../../../src/domain/wave-state.js";

function hosts(spec: string): PlannedHost[] {
  // "a:pending b:succeeded ..." in wave order
  return spec
    .split(" ")
    .filter(Boolean)
    .map((s, ordinal) => {
      const [host, state, group] = s.split(":");
      return { host: host!, state: state as HostState, group: group ?? null, ordinal };
    });
}

describe("planBatch: the next `size` startable hosts in wave order, each tried once a pass", () => {
  const cases: [string, string, number, string[], string[]][] = [
    ["a fresh wave", "a:pending b:pending c:pending", 2, [], ["a", "b"]],
    [
      "succeeded and failed hosts are never planned",
      "a:succeeded b:failed c:pending d:pending",
      5,
      [],
      ["c", "d"],
    ],
    ["skipped hosts are planned again", "a:skipped b:pending", 5, [], ["a", "b"]],
    ["but not twice in one pass", "a:skipped b:pending c:pending", 1, ["a", "b"], ["c"]],
    [
      "leftovers are not planned (they are settled first)",
      "a:running b:unfinished c:needs_review d:pending",
      5,
      [],
      ["d"],
    ],
    ["nothing left", "a:succeeded b:failed", 3, [], []],
    ["batch larger than what is left", "a:pending", 10, [], ["a"]],
  ];
  for (const [name, spec, size, tried, want] of cases)
    test(name, () =>
      assert.deepEqual(
        planBatch(hosts(spec), size, new Set(tried)).batch.map((h) => h.host),
        want,
      ),
    );
  test("`next` resumes the search where the last batch ended", () => {
    const all = hosts("a:pending b:succeeded c:pending d:pending e:pending");
    const first = planBatch(all, 2, new Set());
    assert.deepEqual(
      first.batch.map((h) => h.host),
      ["a", "c"],
    );
    assert.equal(first.next, 3);
    const second = planBatch(all, 2, new Set(["a", "c"]), first.next);
    assert.deepEqual(
      second.batch.map((h) => h.host),
      ["d", "e"],
    );
    assert.deepEqual(planBatch(all, 2, new Set(), 5), { batch: [], next: 5 });
  });
});

describe("nextToStart: concurrency and per-group limits", () => {
  const q = (spec: string) =>
    spec
      .split(" ")
      .filter(Boolean)
      .map((g) => ({ group: g === "-" ? null : g }));
  const cases: [string, string, string, number, number | null, number][] = [
    // name, queue groups, running groups, concurrency, maxPerGroup, want index
    ["free slot, no limit", "db db", "", 2, null, 0],
    ["all slots busy", "db", "web web", 2, null, -1],
    ["empty queue", "", "", 4, null, -1],
    ["group full: the next host of another group goes first", "db web", "db", 4, 1, 1],
    ["every queued group full: wait", "db db", "db", 4, 1, -1],
    ["two per group", "db", "db", 4, 2, 0],
    ["ungrouped hosts are never held back", "db -", "db", 4, 1, 1],
    ["concurrency still wins over groups", "web", "db", 1, 1, -1],
  ];
  for (const [name, queue, running, concurrency, maxPerGroup, want] of cases)
    test(name, () =>
      assert.equal(nextToStart(q(queue), q(running), { concurrency, maxPerGroup }), want),
    );
});

describe("haltReason: when the wave must stop starting hosts", () => {
  const c = (failed: number) => countHosts(Array<HostState>(failed).fill("failed"));
  const cases: [
    string,
    number,
    number,
    { host: string; why: string } | null,
    string[],
    string | null,
  ][] = [
    ["nothing wrong", 0, 0, null, [], null],
    ["failures within the budget", 2, 2, null, [], null],
    [
      "one failure over the budget",
      3,
      2,
      null,
      [],
      "failure budget spent: 3 host(s) failed, the wave allows 2",
    ],
    [
      "budget 0: the first failure stops it",
      1,
      0,
      null,
      [],
      "failure budget spent: 1 host(s) failed, the wave allows 0",
    ],
    [
      "a failed health gate, within the budget",
      1,
      5,
      { host: "h3", why: "exit 1" },
      [],
      "health gate failed on h3: exit 1; no further batch started",
    ],
    [
      "a host in review",
      0,
      0,
      null,
      ["h4"],
      "host h4 needs review: whether the patch landed is unknown",
    ],
    [
      "many in review: review wins over the budget",
      9,
      0,
      null,
      ["a", "b", "c", "d", "e", "f", "g"],
      "hosts a, b, c, d, e and 2 more need review: whether the patch landed is unknown",
    ],
  ];
  for (const [name, failed, max, health, review, want] of cases)
    test(name, () =>
      assert.equal(
        haltReason({
          counts: c(failed),
          maxFailures: max,
          healthFailure: health,
          needsReview: review,
        }),
        want,
      ),
    );
});

describe("passOutcome: completed only when every host succeeded or failed", () => {
  const cases: [HostState[], boolean, string][] = [
    [["succeeded", "succeeded"], true, "2 succeeded, 0 failed"],
    [["succeeded", "failed"], true, "1 succeeded, 1 failed"],
    [
      ["succeeded", "skipped"],
      false,
      "1 succeeded, 0 failed; 1 skipped (busy): run the wave again to continue",
    ],
    [
      ["pending", "unfinished", "needs_review", "running"],
      false,
      "0 succeeded, 0 failed; 1 unfinished, 1 need review, 1 pending, 1 running: run the wave again to continue",
    ],
  ];
  for (const [states, completed, summary] of cases)
    test(states.join(", "), () => {
      const o = passOutcome(countHosts(states));
      assert.equal(o.completed, completed);
      assert.equal(o.summary, summary);
      assert.equal(remainingHosts(countHosts(states)) === 0, completed);
    });
});
