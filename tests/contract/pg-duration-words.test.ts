import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { formatDuration } from "../../src/domain/duration.js";
import { openStore } from "../../src/store/open-store.js";
import { PG_URL, pgSchemaUrl, pgSkip } from "../support/pg.js";

/**
 * PostgreSQL writes some event messages in SQL (lease.expired), SQLite in JavaScript: the same
 * duration must read the same in both. Every boundary of formatDuration, its halves, and a
 * spread of values in each range, both signs.
 */
test("quiesce_duration() on PostgreSQL says what formatDuration says", async (t) => {
  const skip = await pgSkip();
  if (skip) return t.skip(skip);
  const { url, schema, drop } = pgSchemaUrl("duration_words");
  await (await openStore(url)).close(); // migrated
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const edges = [0, 1, 999, 1000, 1004, 1005, 1015, 1234, 9994, 9995, 9999, 10_000, 10_049];
    edges.push(10_050, 12_345, 59_949, 59_950, 59_999, 60_000, 65_000, 3_599_999, 3_600_000);
    edges.push(5_400_000, 86_399_999, 86_400_000, 273_600_000, 30 * 86_400_000);
    const spread = Array.from({ length: 2000 }, (_, i) => Math.floor(1.0137 ** i) + i);
    const values = [...edges, ...spread].flatMap((v) => [v, -v]);
    const { rows } = await client.query<{ ms: string; words: string }>(
      `SELECT v::text AS ms, ${schema}.quiesce_duration(v) AS words FROM unnest($1::bigint[]) AS v`,
      [values],
    );
    assert.equal(rows.length, values.length);
    const differ = rows.filter((r) => r.words !== formatDuration(Number(r.ms)));
    assert.deepEqual(
      differ.slice(0, 5).map((r) => `${r.ms}: ${r.words} vs ${formatDuration(Number(r.ms))}`),
      [],
    );
  } finally {
    await client.end();
    await drop();
  }
});
