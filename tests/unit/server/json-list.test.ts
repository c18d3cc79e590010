import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Hono } from "hono";
import { jsonList } from "../../../src/server/json-list.js";

/** GET / on an app answering with jsonList(head, key, items, toJson). */
async function served<T>(
  head: Record<string, unknown>,
  key: string,
  items: T[],
  toJson: (item: T) => unknown,
) {
  const app = new Hono();
  app.get("/", (c) => jsonList(c, head, key, items, toJson));
  const r = await app.request("/");
  return { status: r.status, type: r.headers.get("content-type"), text: await r.text() };
}

describe("jsonList: byte for byte what c.json gives", () => {
  const item = (i: number) => ({
    n: i,
    name: `scope-${i}`,
    note: i % 7 === 0 ? `zürich ✓ "quoted" \\ ${String.fromCodePoint(0x1f600)}\n` : null,
    nested: { a: [i, null, true] },
  });
  const cases: [string, Record<string, unknown>, number][] = [
    ["no items", { storeNow: "2026-01-01T00:00:00.000Z" }, 0],
    ["one item", { storeNow: "2026-01-01T00:00:00.000Z" }, 1],
    ["exactly one slice", { storeNow: "x" }, 200],
    ["a slice and one more", { storeNow: "x" }, 201],
    ["many slices, not a multiple of one", { storeNow: "x", also: [1, { b: 2 }] }, 1234],
    ["no head", {}, 450],
  ];
  for (const [what, head, n] of cases)
    test(`${what} (${n} items)`, async () => {
      const items = Array.from({ length: n }, (_, i) => i);
      const r = await served(head, "leases", items, item);
      assert.equal(r.status, 200);
      assert.equal(r.type, "application/json");
      assert.equal(r.text, JSON.stringify({ ...head, leases: items.map(item) }));
    });

  test("an item whose JSON is undefined is null, as in any array", async () => {
    const r = await served({}, "xs", [1, 2, 3], (i) => (i === 2 ? undefined : i));
    assert.equal(r.text, '{"xs":[1,null,3]}');
  });
});
