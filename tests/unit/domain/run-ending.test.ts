import assert from "node:assert/strict";
import { test } from "node:test";
import { runEnding, type GuardVerdict, type RunEnding } from "../../../src/domain/run-ending.js";

// [stoppedForLoss, leaseLost, guard, expected]
const TABLE: [boolean, boolean, GuardVerdict, RunEnding][] = [
  [false, false, "armed", "completed"],
  [false, false, "fired_ended", "completed"],
  [false, false, "fired_running", "lease_lost"],
  [false, false, "unguarded", "completed"],
  [false, false, "none", "completed"],
  [false, true, "armed", "lapsed_after_exit"],
  [false, true, "fired_ended", "lapsed_after_exit"],
  [false, true, "fired_running", "lease_lost"],
  [false, true, "unguarded", "lease_lost"],
  [false, true, "none", "lease_lost"],
  [true, false, "armed", "lease_lost"],
  [true, false, "fired_ended", "lease_lost"],
  [true, false, "fired_running", "lease_lost"],
  [true, false, "unguarded", "lease_lost"],
  [true, false, "none", "lease_lost"],
  [true, true, "armed", "lease_lost"],
  [true, true, "fired_ended", "lease_lost"],
  [true, true, "fired_running", "lease_lost"],
  [true, true, "unguarded", "lease_lost"],
  [true, true, "none", "lease_lost"],
];

test("run ending: every combination of facts", () => {
  for (const [stoppedForLoss, leaseLost, guard, expected] of TABLE)
    assert.equal(
      runEnding({ stoppedForLoss, leaseLost, guard }),
      expected,
      JSON.stringify({ stoppedForLoss, leaseLost, guard }),
    );
});

test("run ending: the cases the issue names", () => {
  // A wrapper stopped past the TTL after its command exited: the command's code, not 76.
  assert.equal(
    runEnding({ stoppedForLoss: false, leaseLost: true, guard: "fired_ended" }),
    "lapsed_after_exit",
  );
  // Frozen while the command ran: the guard terminated it.
  assert.equal(
    runEnding({ stoppedForLoss: false, leaseLost: true, guard: "fired_running" }),
    "lease_lost",
  );
  // No guard to ask and the lease is gone: conservative.
  assert.equal(runEnding({ stoppedForLoss: false, leaseLost: true, guard: "none" }), "lease_lost");
});
