import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { EFFECT_STATES } from "../../../src/domain/effect-state.js";
import { RUN_STATES, type RunState } from "../../../src/domain/journal-record.js";
import {
  leftoverAction,
  patchOutcome,
  unfinishedReason,
} from "../../../src/domain/wave-reconcile.js";

describe("leftoverAction: a host an earlier agent left, by its journal run", () => {
  const want: Record<RunState, string> = {
    active: "resume",
    suspended: "resume",
    needs_review: "review",
    completed: "succeeded",
    failed: "failed",
  };
  for (const s of RUN_STATES)
    test(`run ${s}: ${want[s]}`, () =>
      assert.equal(leftoverAction({ state: s, reviewReason: null }).action, want[s]));
  test("no run at all: start from scratch (the patch never left)", () =>
    assert.equal(leftoverAction(null).action, "start"));
  test("a review keeps the journal's reason", () =>
    assert.equal(
      leftoverAction({ state: "needs_review", reviewReason: "effect x quarantined" }).why,
      "effect x quarantined",
    ));
});

describe("patchOutcome: what the recorded result means", () => {
  const cases: [unknown, boolean, string][] = [
    [{ exitCode: 0, via: "patch" }, true, "the patch command exited 0"],
    [{ exitCode: 3, via: "patch" }, false, "the patch command exited 3"],
    [
      { exitCode: 100, via: "patch", output: "E: lock" },
      false,
      "the patch command exited 100 (last output: E: lock)",
    ],
    [{ exitCode: 0, via: "check" }, true, "the --check command says it is patched"],
    [null, true, "resolved as patched by an operator"],
    ["done", true, "resolved as patched by an operator"],
    [{}, true, "resolved as patched by an operator"],
  ];
  for (const [result, ok, why] of cases)
    test(JSON.stringify(result), () => assert.deepEqual(patchOutcome(result), { ok, why }));
});

describe("unfinishedReason: what a stop leaves on record, for every effect state", () => {
  for (const e of [null, ...EFFECT_STATES])
    test(`patch phase, effect ${e ?? "(none)"}`, () => {
      const r = unfinishedReason("patch", e, "SIGINT again");
      assert.match(r, /^SIGINT again/);
      if (e === "DISPATCHED") assert.match(r, /whether it applied is unknown/);
      if (e === null || e === "PLANNED") assert.match(r, /nothing ran on the host/);
    });
  test("health phase: the patch is known to have succeeded", () =>
    assert.match(unfinishedReason("health", "OBSERVED", "stop"), /after the patch succeeded/));
});
