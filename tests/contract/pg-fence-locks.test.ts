import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { openStore } from "../../src/store/open-store.js";
import { LEASE_FENCE } from "../../src/store/postgres/pg-journal-statements.js";
import type { Store } from "../../src/store/store.js";
import { PG_URL, pgSchemaUrl, pgSkip } from "../support/pg.js";
import { owner } from "./lease-store.contract.js";

/**
 * A fenced write (a journal step, a wave host's state) locks its lease row until it commits, so
 * that no new owner of the lease can commit in between (I3). The lock must stop only that: a
 * change of owner or of `held` (a takeover, a release, an acquisition). The holder's own
 * renewal must go through, or a holder writing from several connections at once (a wave's
 * hosts, concurrent journal steps) keeps its heartbeat waiting: PostgreSQL lets a new shared
 * lock in past a queued UPDATE, so overlapping short writes can hold a renewal back for as
 * long as they keep coming (CI saw a wave agent lose its 1s lease that way).
 *
 * Each test holds one fenced write open on a raw connection and asks the store for the rest.
 */
const HELD_OPEN: unique symbol = Symbol("still waiting");

/** `p`'s value, or HELD_OPEN if it has not settled within `ms` (the open write still open). */
async function settledWithin<T>(p: Promise<T>, ms: number): Promise<T | typeof HELD_OPEN> {
  return Promise.race([p, sleep(ms).then((): typeof HELD_OPEN => HELD_OPEN)]);
}

async function openFixture(tag: string, ttlMs: number) {
  const s = pgSchemaUrl(tag);
  const store: Store = await openStore(s.url);
  const got = await store.leases.acquire({ scope: "s", ttlMs, owner: owner("r-1"), ticket: null });
  assert.ok(got.ok);
  const writer = new pg.Client({
    connectionString: PG_URL,
    options: `-c search_path=${s.schema}`,
  });
  await writer.connect();
  await writer.query("BEGIN");
  const fenced = await writer.query(LEASE_FENCE, ["s", got.lease.token]);
  assert.equal(fenced.rowCount, 1, "the write's fence found the lease current");
  const cleanup = async () => {
    await writer.end().catch(() => undefined);
    await store.close();
    await s.drop();
  };
  return { store, writer, token: got.lease.token, cleanup };
}

describe("PostgreSQL fence locks", { skip: await pgSkip() }, () => {
  test("an open fenced write does not hold up its own lease's renewal", async () => {
    const f = await openFixture("fence-renew", 60_000);
    try {
      const renewed = await settledWithin(
        f.store.leases.renew([{ scope: "s", token: f.token, ttlMs: 60_000 }]),
        5_000,
      );
      assert.notEqual(renewed, HELD_OPEN, "the renewal waited for the holder's open write");
      assert.equal(renewed === HELD_OPEN ? -1 : renewed.refused.size, 0, "renewed");
      await f.writer.query("COMMIT");
    } finally {
      await f.cleanup();
    }
  });

  test("an open fenced write holds off a takeover of its expired lease until it commits", async () => {
    const f = await openFixture("fence-takeover", 300);
    try {
      await sleep(400); // expired, never renewed
      const taking = f.store.leases.takeOver({
        scope: "s",
        staleToken: f.token,
        ttlMs: 60_000,
        owner: owner("r-2"),
        ticket: null,
        record: {
          previous: { token: f.token, owner: owner("r-1"), heartbeatAt: 1, expiresAt: 2 },
          basis: "dead",
          summary: "the owner is gone",
          probes: [{ probe: "local-process", verdict: "dead", evidence: "pid 4242 is gone" }],
        },
      });
      assert.equal(await settledWithin(taking, 1_000), HELD_OPEN, "taken over mid-write");
      await f.writer.query("COMMIT");
      const taken = await taking;
      assert.ok(taken.ok, "taken over once the write committed");
      assert.equal(taken.lease.token, f.token + 1);
    } finally {
      await f.cleanup();
    }
  });

  test("an open fenced write holds off the release of its expired lease until it commits", async () => {
    const f = await openFixture("fence-stale", 300);
    try {
      await sleep(400);
      const releasing = f.store.leases.releaseStale({
        scope: "s",
        token: f.token,
        runId: "r-1",
        host: "test-host",
        pid: 4242,
        reason: "expired",
      });
      assert.equal(await settledWithin(releasing, 1_000), HELD_OPEN, "released mid-write");
      await f.writer.query("COMMIT");
      assert.ok((await releasing).ok, "released once the write committed");
    } finally {
      await f.cleanup();
    }
  });
});
