import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  effectChecksum,
  effectProblem,
  isOpenRun,
  runProblems,
  sealEffect,
  toJsonText,
  type EffectContent,
  type EffectRecord,
  type RunRecord,
} from "../../../src/domain/journal-record.js";

const BASE: EffectContent = {
  runId: "run-1",
  key: "invoice:1:send",
  ordinal: 0,
  provider: "pay",
  state: "PLANNED",
  prevState: null,
  seq: 1,
  attempt: 0,
  token: 7,
  request: '{"amount":5}',
  requestId: null,
  result: null,
  context: null,
  reviewReason: null,
};

function rec(over: Partial<EffectContent> = {}): EffectRecord {
  return { ...sealEffect({ ...BASE, ...over }), createdAt: 1, updatedAt: 2 };
}

const RUN: RunRecord = {
  runId: "run-1",
  runtimeId: "rt",
  scope: "runtime:rt",
  state: "active",
  seq: 5,
  token: 7,
  checkpoint: null,
  reviewReason: null,
  createdAt: 1,
  updatedAt: 2,
};

describe("effectChecksum", () => {
  test("is stable: records written by earlier versions must still validate", () => {
    assert.equal(
      effectChecksum({ ...BASE }),
      "ef98f3894fd169e402042df29b753a666efcf7ae3983f23e5eb4aaa76fec6538",
    );
  });
  const changes: [keyof EffectContent, unknown][] = [
    ["runId", "run-2"],
    ["key", "invoice:2:send"],
    ["ordinal", 1],
    ["provider", "mail"],
    ["state", "DISPATCHED"],
    ["prevState", "PLANNED"],
    ["seq", 2],
    ["attempt", 1],
    ["token", 8],
    ["request", '{"amount":6}'],
    ["requestId", "req-1"],
    ["result", "null"],
    ["context", "{}"],
    ["reviewReason", "x"],
  ];
  for (const [field, value] of changes)
    test(`covers ${field}`, () => {
      assert.notEqual(effectChecksum({ ...BASE, [field]: value }), effectChecksum(BASE));
    });
  test("store times are outside it", () => {
    const a = rec();
    assert.equal(effectProblem({ ...a, createdAt: 99, updatedAt: 100 }, 5), null);
  });
});

describe("effectProblem: a record recovery may trust, or why not (I9)", () => {
  const cases: [string, EffectRecord, number, RegExp | null][] = [
    ["a PLANNED record", rec(), 5, null],
    ["DISPATCHED", rec({ state: "DISPATCHED", prevState: "PLANNED", attempt: 1 }), 5, null],
    [
      "ACKNOWLEDGED with a request id",
      rec({ state: "ACKNOWLEDGED", prevState: "DISPATCHED", attempt: 1, requestId: "r" }),
      5,
      null,
    ],
    [
      "ACKNOWLEDGED without a request id",
      rec({ state: "ACKNOWLEDGED", prevState: "DISPATCHED", attempt: 1 }),
      5,
      null,
    ],
    [
      "OBSERVED with its result",
      rec({ state: "OBSERVED", prevState: "ACKNOWLEDGED", attempt: 1, result: '{"ok":1}' }),
      5,
      null,
    ],
    [
      "NEEDS_REVIEW with a reason",
      rec({ state: "NEEDS_REVIEW", prevState: "DISPATCHED", attempt: 1, reviewReason: "?" }),
      5,
      null,
    ],
    [
      "a field changed after sealing",
      { ...rec(), request: '{"amount":500}' },
      5,
      /checksum mismatch/,
    ],
    ["a state changed after sealing", { ...rec(), state: "OBSERVED" }, 5, /checksum mismatch/],
    ["an unknown state", { ...rec(), state: "SENT" as never }, 5, /unknown state "SENT"/],
    [
      "an unknown previous state",
      { ...rec(), prevState: "X" as never },
      5,
      /unknown previous state/,
    ],
    [
      "an impossible transition, sealed",
      rec({ state: "OBSERVED", prevState: "PLANNED", result: "1" }),
      5,
      /impossible transition PLANNED -> OBSERVED/,
    ],
    [
      "created in a state other than PLANNED",
      rec({ state: "DISPATCHED", attempt: 1 }),
      5,
      /impossible transition \(new\) -> DISPATCHED/,
    ],
    ["a sequence ahead of the run's", rec({ seq: 9 }), 5, /sequence 9 is ahead of the run's 5/],
    ["a request that is not JSON", rec({ request: "{" }), 5, /request is not valid JSON/],
    [
      "a result that is not JSON",
      rec({ state: "OBSERVED", prevState: "ACKNOWLEDGED", attempt: 1, result: "nope" }),
      5,
      /result is not valid JSON/,
    ],
    ["a context that is not JSON", rec({ context: "[" }), 5, /context is not valid JSON/],
    ["PLANNED with a request id", rec({ requestId: "r" }), 5, /PLANNED but it carries/],
    [
      "DISPATCHED never counted",
      rec({ state: "DISPATCHED", prevState: "PLANNED" }),
      5,
      /no dispatch attempt/,
    ],
    [
      "DISPATCHED with a result: a partial acknowledgement",
      rec({ state: "DISPATCHED", prevState: "PLANNED", attempt: 1, result: "1" }),
      5,
      /partial acknowledgement/,
    ],
    [
      "ACKNOWLEDGED never dispatched",
      rec({ state: "ACKNOWLEDGED", prevState: "DISPATCHED" }),
      5,
      /never dispatched/,
    ],
    [
      "OBSERVED without a result",
      rec({ state: "OBSERVED", prevState: "ACKNOWLEDGED", attempt: 1 }),
      5,
      /without a result/,
    ],
    [
      "NEEDS_REVIEW without a reason",
      rec({ state: "NEEDS_REVIEW", prevState: "DISPATCHED", attempt: 1 }),
      5,
      /without a reason/,
    ],
  ];
  for (const [name, e, runSeq, want] of cases)
    test(name, () => {
      const p = effectProblem(e, runSeq);
      if (want === null) assert.equal(p, null);
      else assert.match(p ?? "(valid)", want);
    });
});

describe("runProblems", () => {
  test("a run and valid effects: none", () => assert.deepEqual(runProblems(RUN, [rec()]), []));
  test("every problem is one sentence naming the record", () => {
    const bad = runProblems({ ...RUN, state: "lost" as never, checkpoint: "{" }, [
      { ...rec(), result: "1" },
      rec({ runId: "run-9" }),
    ]);
    assert.deepEqual(bad, [
      'run run-1 has unknown state "lost"',
      "run run-1: its checkpoint is not valid JSON",
      "effect invoice:1:send failed validation: checksum mismatch: the record was changed outside quiesce or is corrupt",
      "effect invoice:1:send belongs to run run-9",
    ]);
  });
});

describe("helpers", () => {
  const open: [RunRecord["state"], boolean][] = [
    ["active", true],
    ["suspended", true],
    ["needs_review", false],
    ["completed", false],
    ["failed", false],
  ];
  for (const [s, want] of open)
    test(`isOpenRun(${s}) = ${want}`, () => assert.equal(isOpenRun(s), want));
  test("toJsonText turns undefined into null", () => {
    assert.equal(toJsonText(undefined), "null");
    assert.equal(toJsonText({ a: 1 }), '{"a":1}');
  });
});
