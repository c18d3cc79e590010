import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { randomUuid, timeOrderedUuid } from "../../../src/process/random-uuid.js";

const CANONICAL = (version: number) =>
  new RegExp(`^[0-9a-f]{8}-[0-9a-f]{4}-${version}[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`);

/** The 48-bit millisecond timestamp of a version 7 UUID. */
const msOf = (u: string) => parseInt(u.replaceAll("-", "").slice(0, 12), 16);

describe("randomUuid: store ids without loading node:crypto", () => {
  test("is a version 4, variant 10 UUID in the canonical lower-case form", () => {
    for (let i = 0; i < 200; i++) assert.match(randomUuid(), CANONICAL(4));
  });

  test("never repeats, and its 122 random bits are not stuck (each hex digit varies)", () => {
    // 5,000 ids: many times the 512-byte block the bytes are read in, so refills are covered.
    const ids = Array.from({ length: 5000 }, randomUuid);
    assert.equal(new Set(ids).size, ids.length);
    const hex = ids.map((u) => u.replaceAll("-", ""));
    for (const pos of [0, 7, 13, 17, 31])
      // outside the fixed version and variant digits
      assert.ok(new Set(hex.map((h) => h[pos])).size >= 15, `digit ${pos} barely varies`);
  });
});

describe("timeOrderedUuid: run ids that sort by time (RFC 9562 version 7)", () => {
  test("is a version 7, variant 10 UUID whose first 48 bits are the given millisecond", () => {
    const at = Date.now() + 10_000; // later than any id made so far in this process
    const u = timeOrderedUuid(at);
    assert.match(u, CANONICAL(7));
    assert.equal(msOf(u), at);
  });

  test("ids made one after another sort in the order they were made, and never repeat", () => {
    // Thousands in the same few milliseconds: the 12-bit sequence keeps them in order, and
    // carries into the next millisecond when it runs over.
    const ids = Array.from({ length: 20_000 }, () => timeOrderedUuid());
    assert.equal(new Set(ids).size, ids.length);
    for (let i = 1; i < ids.length; i++)
      assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} then ${ids[i]}: out of order`);
  });

  test("a clock that steps back does not make an id sort before the last one", () => {
    const base = Date.now() + 60_000;
    const first = timeOrderedUuid(base);
    const after = timeOrderedUuid(base - 5_000);
    assert.ok(first < after);
    assert.equal(msOf(after), base, "it stays on the last millisecond");
    const later = timeOrderedUuid(base + 1);
    assert.ok(after < later);
    assert.equal(msOf(later), base + 1);
  });

  test("its last 62 bits are random: the tail varies between ids of the same millisecond", () => {
    const at = Date.now() + 120_000;
    const ids = Array.from({ length: 2000 }, () => timeOrderedUuid(at));
    const tails = ids.map((u) => u.slice(-12));
    assert.equal(new Set(tails).size, tails.length);
    for (const pos of [0, 5, 11])
      assert.ok(new Set(tails.map((t) => t[pos])).size >= 15, `tail digit ${pos} barely varies`);
  });
});
