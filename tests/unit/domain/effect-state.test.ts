import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  EFFECT_STATES,
  EffectCause,
  assertTransition,
  canTransition,
  isLegalEdge,
  isSettled,
  isUnclassified,
  type EffectState,
} from "../../../src/domain/effect-state.js";
import { assertQuiesceError } from "../helpers.js";

/** Every legal (from, to, cause); anything else must be refused. */
const LEGAL: readonly [EffectState | null, EffectState, EffectCause][] = [
  [null, "PLANNED", "progress"],
  ["PLANNED", "DISPATCHED", "progress"],
  ["PLANNED", "DISPATCHED", "redispatch"],
  ["DISPATCHED", "DISPATCHED", "redispatch"],
  ["DISPATCHED", "ACKNOWLEDGED", "progress"],
  ["DISPATCHED", "ACKNOWLEDGED", "lookup"],
  ["DISPATCHED", "PLANNED", "lookup"],
  ["DISPATCHED", "NEEDS_REVIEW", "quarantine"],
  ["ACKNOWLEDGED", "OBSERVED", "progress"],
  ["ACKNOWLEDGED", "OBSERVED", "lookup"],
  ["ACKNOWLEDGED", "NEEDS_REVIEW", "quarantine"],
  ["NEEDS_REVIEW", "OBSERVED", "resolution"],
  ["NEEDS_REVIEW", "PLANNED", "resolution"],
];

describe("effect transitions: the whole table (states x states x causes)", () => {
  const causes = Object.values(EffectCause);
  for (const from of [null, ...EFFECT_STATES]) {
    for (const to of EFFECT_STATES) {
      for (const cause of causes) {
        const legal = LEGAL.some(([f, t, c]) => f === from && t === to && c === cause);
        test(`${from ?? "(new)"} -> ${to} by ${cause}: ${legal ? "legal" : "refused"}`, () => {
          assert.equal(canTransition(from, to, cause), legal);
        });
      }
    }
  }
});

describe("invariants the table encodes", () => {
  test("OBSERVED has no way out: it is never replayed (I9)", () => {
    for (const to of EFFECT_STATES)
      for (const cause of Object.values(EffectCause))
        assert.equal(canTransition("OBSERVED", to, cause), false);
  });
  test("nothing reaches ACKNOWLEDGED or OBSERVED without passing DISPATCHED (I8)", () => {
    for (const [from, to, cause] of LEGAL)
      if (to === "ACKNOWLEDGED") assert.equal(from, "DISPATCHED");
      else if (to === "OBSERVED") assert.ok(from === "ACKNOWLEDGED" || cause === "resolution");
  });
  test("only a human resolution leaves NEEDS_REVIEW", () => {
    for (const [from, , cause] of LEGAL)
      if (from === "NEEDS_REVIEW") assert.equal(cause, "resolution");
  });
  test("a dispatched effect is re-sent only as a redispatch (an idempotent provider)", () => {
    assert.equal(canTransition("DISPATCHED", "DISPATCHED", "progress"), false);
    assert.equal(canTransition("DISPATCHED", "DISPATCHED", "redispatch"), true);
  });
});

describe("isLegalEdge (what validation of a stored record checks)", () => {
  const cases: [EffectState | null, EffectState, boolean][] = [
    [null, "PLANNED", true],
    [null, "DISPATCHED", false],
    ["PLANNED", "OBSERVED", false],
    ["PLANNED", "ACKNOWLEDGED", false],
    ["DISPATCHED", "OBSERVED", false],
    ["ACKNOWLEDGED", "OBSERVED", true],
    ["OBSERVED", "OBSERVED", false],
    ["NEEDS_REVIEW", "PLANNED", true],
  ];
  for (const [from, to, want] of cases)
    test(`${from ?? "(new)"} -> ${to}: ${want}`, () => assert.equal(isLegalEdge(from, to), want));
});

describe("classification helpers", () => {
  const cases: [EffectState, boolean, boolean][] = [
    ["PLANNED", false, false],
    ["DISPATCHED", true, false],
    ["ACKNOWLEDGED", false, false],
    ["OBSERVED", false, true],
    ["NEEDS_REVIEW", false, true],
  ];
  for (const [s, unclassified, settled] of cases)
    test(`${s}: unclassified=${unclassified} settled=${settled}`, () => {
      assert.equal(isUnclassified(s), unclassified);
      assert.equal(isSettled(s), settled);
    });
});

test("assertTransition names the key and the edge", () => {
  assertQuiesceError(
    () => assertTransition("invoice:1:send", "OBSERVED", "DISPATCHED", "redispatch"),
    "INVALID_TRANSITION",
    "effect invoice:1:send: OBSERVED -> DISPATCHED is not a legal transition (redispatch)",
  );
  assert.doesNotThrow(() => assertTransition("k", "PLANNED", "DISPATCHED", "progress"));
});
