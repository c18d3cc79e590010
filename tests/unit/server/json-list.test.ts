import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Hono } from "hono";
import type { LeaseRecord } from "../../../src/domain/lease.js";
import { iso, leaseClockText, leaseJson, leaseText } from "../../../src/lease/lease-json.js";
import { jsonList, leaseTextList } from "../../../src/server/json-list.js";
import { owner, T0 } from "../helpers.js";

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

describe("leaseTextList: leases from their kept parts, byte for byte what c.json gives", () => {
  const lease = (i: number): LeaseRecord => ({
    scope: `host:h-${String(i).padStart(5, "0")}`,
    token: i + 1,
    owner: owner({
      runId: `r-${i}`,
      note: i % 5 === 0 ? `zürich ✓ "quoted" \\ ${String.fromCodePoint(0x1f600)}\n` : null,
    }),
    ttlMs: 30_000,
    acquiredAt: T0 - 60_000,
    heartbeatAt: T0 - (i % 40) * 1000,
    expiresAt: i % 9 === 0 ? Number.MAX_SAFE_INTEGER : T0 - (i % 40) * 1000 + 30_000,
    takeover: null,
  });
  for (const n of [0, 1, 200, 201, 1234])
    test(`${n} leases`, async () => {
      const leases = Array.from({ length: n }, (_, i) => lease(i));
      const texts = leases.map(leaseText);
      const now = T0 + 5_000;
      const nowText = JSON.stringify(iso(now));
      const app = new Hono();
      app.get("/", (c) =>
        leaseTextList(c, { storeNow: iso(now) }, "leases", texts, (t) =>
          leaseClockText(t.lease, now, nowText),
        ),
      );
      const r = await app.request("/");
      assert.equal(
        await r.text(),
        JSON.stringify({ storeNow: iso(now), leases: leases.map((l) => leaseJson(l, now)) }),
      );
    });
});
