import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DEFAULT_POLICY, type MaintenancePolicy } from "../../../src/domain/maintenance-policy.js";
import {
  RUNTIME_STATES,
  assertRuntimeTransition,
  canRuntimeTransition,
  deadlineDecision,
  mayQuiesce,
  startupPlan,
  type RuntimeState,
} from "../../../src/domain/runtime-state.js";
import { assertQuiesceError } from "../helpers.js";

const LEGAL = [
  "RUNNING>DRAINING",
  "DRAINING>QUIESCED",
  "DRAINING>NEEDS_REVIEW",
  "QUIESCED>STOPPED",
];

describe("runtime transitions: every pair", () => {
  for (const from of RUNTIME_STATES)
    for (const to of RUNTIME_STATES) {
      const legal = LEGAL.includes(`${from}>${to}`);
      test(`${from} -> ${to}: ${legal ? "legal" : "refused"}`, () =>
        assert.equal(canRuntimeTransition(from, to), legal));
    }
  test("STOPPED only after QUIESCED (I8)", () => {
    for (const from of RUNTIME_STATES)
      assert.equal(canRuntimeTransition(from, "STOPPED"), from === "QUIESCED");
  });
  test("assertRuntimeTransition names the runtime", () =>
    assertQuiesceError(
      () => assertRuntimeTransition("agent-1", "RUNNING", "QUIESCED"),
      "INVALID_TRANSITION",
      "runtime agent-1: RUNNING -> QUIESCED is not a legal transition",
    ));
});

describe("mayQuiesce: only with nothing unclassified in flight and no run active (I8)", () => {
  const cases: [number, number, boolean][] = [
    [0, 0, true],
    [1, 0, false],
    [0, 1, false],
    [2, 2, false],
  ];
  for (const [u, a, want] of cases)
    test(`${u} unclassified, ${a} active: ${want}`, () =>
      assert.equal(mayQuiesce({ unclassifiedEffects: u, activeRuns: a }), want));
});

describe("deadlineDecision: on_deadline x unknown_side_effects x what is still in flight", () => {
  type Case = [
    MaintenancePolicy["onDeadline"],
    MaintenancePolicy["unknownSideEffects"],
    number,
    number,
    number,
    string,
    string,
    RuntimeState,
  ];
  // policy, unknown effects policy, unclassified effects, active runs, runs with unclassified
  const cases: Case[] = [
    ["checkpoint_and_stop", "quarantine", 0, 2, 0, "needs_review", "suspended", "QUIESCED"],
    ["checkpoint_and_stop", "quarantine", 1, 2, 1, "needs_review", "suspended", "NEEDS_REVIEW"],
    ["checkpoint_and_stop", "fail", 2, 1, 1, "failed", "suspended", "NEEDS_REVIEW"],
    ["abort_and_review", "quarantine", 0, 1, 0, "needs_review", "needs_review", "NEEDS_REVIEW"],
    ["abort_and_review", "fail", 1, 3, 1, "failed", "needs_review", "NEEDS_REVIEW"],
    ["abort_and_review", "quarantine", 0, 0, 0, "needs_review", "needs_review", "QUIESCED"],
  ];
  for (const [
    onDeadline,
    unknownSideEffects,
    u,
    a,
    ru,
    unclassifiedRuns,
    otherRuns,
    runtime,
  ] of cases)
    test(`${onDeadline}/${unknownSideEffects}, ${u} unclassified in ${ru} of ${a} runs: ${runtime}`, () => {
      const d = deadlineDecision(
        { onDeadline, unknownSideEffects },
        { unclassifiedEffects: u, activeRuns: a, runsWithUnclassified: ru },
      );
      assert.deepEqual(
        [d.unclassifiedRuns, d.otherRuns, d.runtime],
        [unclassifiedRuns, otherRuns, runtime],
      );
      assert.match(d.summary, /^drain deadline passed: /);
    });
  test("the summary says what happened and which setting decided it", () => {
    const d = deadlineDecision(DEFAULT_POLICY, {
      unclassifiedEffects: 1,
      activeRuns: 3,
      runsWithUnclassified: 1,
    });
    assert.equal(
      d.summary,
      "drain deadline passed: 1 effect(s) dispatched but not acknowledged: quarantined, 1 run(s) sent to review (unknown_side_effects: quarantine); 2 run(s) suspended at their last checkpoint (on_deadline: checkpoint_and_stop)",
    );
  });
});

describe("startupPlan: what a new process does with its predecessor's record", () => {
  const cases: [RuntimeState | null, boolean, RuntimeState | null, RegExp][] = [
    [null, false, null, /^new runtime$/],
    ["STOPPED", false, null, /stopped cleanly/],
    ["QUIESCED", false, "STOPPED", /quiesced .*nothing was in flight/],
    ["RUNNING", true, null, /died while RUNNING: recovering its runs before accepting work/],
    [
      "DRAINING",
      true,
      "NEEDS_REVIEW",
      /died while DRAINING \(maintenance mw-1\): recorded NEEDS_REVIEW/,
    ],
    ["NEEDS_REVIEW", true, null, /ended in NEEDS_REVIEW/],
  ];
  for (const [prev, recover, first, found] of cases)
    test(`${prev ?? "no record"}: recover=${recover}, first=${first ?? "-"}`, () => {
      const p = startupPlan(prev === null ? null : { state: prev, maintenanceId: "mw-1" });
      assert.equal(p.recover, recover);
      assert.equal(p.first?.to ?? null, first);
      assert.match(p.found, found);
    });
  test("every record that never reached QUIESCED is recovered before work is accepted", () => {
    for (const s of RUNTIME_STATES) {
      const p = startupPlan({ state: s, maintenanceId: null });
      assert.equal(p.recover, s !== "QUIESCED" && s !== "STOPPED", s);
    }
  });
});
