import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  canonicalJson,
  checkKey,
  derivedKey,
  inputHash,
} from "../../../src/domain/canonical-json.js";
import { isQuiesceError } from "../../../src/domain/errors.js";

describe("canonical input: the same logical input always gives the same key", () => {
  test("object key order does not matter, at any depth; array order does", () => {
    assert.equal(
      canonicalJson({ b: 1, a: { d: [1, 2], c: "x" } }),
      '{"a":{"c":"x","d":[1,2]},"b":1}',
    );
    assert.equal(inputHash({ id: "8472", amount: 5 }), inputHash({ amount: 5, id: "8472" }));
    assert.notEqual(inputHash({ list: [1, 2] }), inputHash({ list: [2, 1] }));
  });

  test("numbers: 1, 1.0 and 1e0 are one number, -0 is 0, 0.1 keeps its shortest form; NaN and Infinity are refused", () => {
    assert.equal(canonicalJson([1, 1.0, 1, -0, 0.1, 1e21, 5e-7]), "[1,1,1,0,0.1,1e+21,5e-7]");
    assert.equal(inputHash({ amount: 5 }), inputHash(JSON.parse('{"amount": 5.000}')));
    assert.notEqual(
      inputHash({ amount: 5 }),
      inputHash({ amount: "5" }),
      "a string is not a number",
    );
    for (const bad of [NaN, Infinity, -Infinity])
      assert.throws(
        () => canonicalJson({ amount: bad }),
        /input\.amount: .* cannot be part of a JSON input/,
      );
    assert.throws(() => canonicalJson({ n: 10n }), /input\.n: a bigint cannot be part/);
  });

  test("unicode: composed and decomposed forms are one string (NFC), in values and in keys", () => {
    const composed = "Zürich"; // U+00FC
    const decomposed = "Zu\u0308rich"; // u + U+0308
    assert.notEqual(composed, decomposed);
    assert.equal(inputHash({ city: composed }), inputHash({ city: decomposed }));
    assert.equal(inputHash({ [composed]: 1 }), inputHash({ [decomposed]: 1 }));
    assert.notEqual(inputHash({ city: "Zurich" }), inputHash({ city: composed }));
    assert.equal(canonicalJson('😀\n"'), JSON.stringify('😀\n"'));
  });

  test("undefined members are dropped as JSON drops them; a Date is its JSON; a cycle is refused", () => {
    assert.equal(canonicalJson({ a: 1, b: undefined }), '{"a":1}');
    assert.equal(canonicalJson([undefined]), "[null]");
    assert.equal(canonicalJson({ at: new Date(0) }), '{"at":"1970-01-01T00:00:00.000Z"}');
    const cyc: Record<string, unknown> = {};
    cyc.self = cyc;
    assert.throws(() => canonicalJson(cyc), /refers to itself/);
    const shared = { x: 1 };
    assert.equal(canonicalJson([shared, shared]), '[{"x":1},{"x":1}]', "shared is not a cycle");
  });

  test("derived key: the tool's name and the input's hash, no attempt in it; a valid idempotency key", () => {
    const k = derivedKey("tool:sendInvoice", { id: "8472", amount: 5 });
    assert.match(k, /^tool:sendInvoice:[0-9a-f]{32}$/);
    assert.equal(k, derivedKey("tool:sendInvoice", { amount: 5, id: "8472" }));
    assert.notEqual(k, derivedKey("tool:sendReminder", { amount: 5, id: "8472" }));
  });

  test("a key function's answer: a string that is a valid key, or one sentence", () => {
    assert.equal(checkKey("invoice:1:send", "tool t"), "invoice:1:send");
    for (const [v, want] of [
      [42, /tool t: the idempotency key must be a string, not number/],
      [null, /must be a string, not null/],
      [undefined, /must be a string, not undefined/],
      ["has space", /tool t: the key: "has space" is not a valid idempotency key/],
    ] as const) {
      const e = (() => {
        try {
          checkKey(v, "tool t");
        } catch (err) {
          return err;
        }
        return null;
      })();
      assert.ok(isQuiesceError(e, "INVALID_INPUT"));
      assert.match((e as Error).message, want);
    }
  });
});
