import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { randomUuid } from "../../../src/process/random-uuid.js";

describe("randomUuid: run ids without loading node:crypto", () => {
  test("is a version 4, variant 10 UUID in the canonical lower-case form", () => {
    for (let i = 0; i < 200; i++)
      assert.match(
        randomUuid(),
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
  });

  test("never repeats, and its 122 random bits are not stuck (each hex digit varies)", () => {
    const ids = Array.from({ length: 5000 }, randomUuid);
    assert.equal(new Set(ids).size, ids.length);
    const hex = ids.map((u) => u.replaceAll("-", ""));
    for (const pos of [0, 7, 13, 17, 31])
      // outside the fixed version and variant digits
      assert.ok(new Set(hex.map((h) => h[pos])).size >= 15, `digit ${pos} barely varies`);
  });
});
