import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { EFFECT_STATES, type EffectState } from "../../../src/domain/effect-state.js";
import {
  applyLookup,
  classifyEffect,
  type EffectDecision,
  type LookupAnswer,
  type ProviderCapabilities,
} from "../../../src/domain/recovery.js";

type Caps = "unregistered" | "neither" | "idempotent" | "lookup" | "both";
const CAPS: Record<Caps, ProviderCapabilities | null> = {
  unregistered: null,
  neither: { idempotencyKey: false, statusLookup: false },
  idempotent: { idempotencyKey: true, statusLookup: false },
  lookup: { idempotencyKey: false, statusLookup: true },
  both: { idempotencyKey: true, statusLookup: true },
};

/** The whole decision table of I9: state x provider capabilities x "result recorded". */
function expected(state: EffectState, caps: Caps, hasResult: boolean): EffectDecision["action"] {
  switch (state) {
    case "OBSERVED":
      return "done";
    case "NEEDS_REVIEW":
      return "wait_review";
    case "PLANNED":
      return caps === "unregistered" ? "blocked" : "dispatch";
    case "DISPATCHED":
      if (caps === "lookup" || caps === "both") return "lookup";
      if (caps === "idempotent") return "redispatch";
      return "quarantine";
    case "ACKNOWLEDGED":
      if (caps === "lookup" || caps === "both") return "lookup";
      return hasResult ? "finish_from_record" : "quarantine";
  }
}

describe("classifyEffect: every state, capability set and recorded result", () => {
  for (const state of EFFECT_STATES)
    for (const caps of Object.keys(CAPS) as Caps[])
      for (const hasResult of [false, true]) {
        const want = expected(state, caps, hasResult);
        test(`${state}, provider ${caps}, result ${hasResult ? "recorded" : "none"}: ${want}`, () => {
          const d = classifyEffect(state, CAPS[caps], hasResult);
          assert.equal(d.action, want);
          assert.ok(d.why.length > 10, "every decision says why");
        });
      }
});

describe("the rules I9 forbids breaking", () => {
  test("an OBSERVED effect is never dispatched again, whatever the provider", () => {
    for (const c of Object.values(CAPS))
      for (const r of [false, true]) assert.equal(classifyEffect("OBSERVED", c, r).action, "done");
  });
  test("a DISPATCHED effect is re-sent only to a provider that honours the key and has no lookup", () => {
    for (const [name, c] of Object.entries(CAPS)) {
      const a = classifyEffect("DISPATCHED", c, false).action;
      assert.equal(a === "redispatch", name === "idempotent", name);
      assert.notEqual(a, "dispatch");
    }
  });
});

describe("applyLookup", () => {
  const answers: Record<string, LookupAnswer> = {
    absent: { status: "absent" },
    acknowledged: { status: "acknowledged", requestId: "r" },
    observed: { status: "observed", requestId: "r", result: 1 },
  };
  const table: [EffectState, keyof typeof answers, EffectState[]][] = [
    ["DISPATCHED", "absent", ["PLANNED"]],
    ["DISPATCHED", "acknowledged", ["ACKNOWLEDGED"]],
    ["DISPATCHED", "observed", ["ACKNOWLEDGED", "OBSERVED"]],
    ["ACKNOWLEDGED", "absent", ["NEEDS_REVIEW"]],
    ["ACKNOWLEDGED", "acknowledged", []],
    ["ACKNOWLEDGED", "observed", ["OBSERVED"]],
  ];
  for (const [state, answer, steps] of table)
    test(`${state} + ${answer}: ${steps.join(" -> ") || "no change"}`, () => {
      assert.deepEqual(applyLookup(state, answers[answer]!).steps, steps);
    });
  for (const state of ["PLANNED", "OBSERVED", "NEEDS_REVIEW"] as const)
    for (const a of Object.keys(answers))
      test(`${state} + ${a}: nothing to look up`, () => {
        assert.deepEqual(applyLookup(state, answers[a]!).steps, []);
      });
});
