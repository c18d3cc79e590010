import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { owner } from "../contract/lease-store.contract.js";
import { countNamedStatements } from "../support/pg.js";
import { makePrivatePg, privatePgUnavailable } from "../support/private-pg.js";

/**
 * I1 and I2 across a crash of the server: acquisitions made together (one ACQUIRE_MANY) were
 * told "won" only once their commit was durable, so after the server is killed (immediate
 * shutdown: its shared memory, WAL buffers included, is gone) and started again, each lease is
 * still held with its token, and nobody else can take it or reuse the token. The cluster's WAL
 * writer waits 10 s, so a commit that did not wait for its own flush (the queue's places in
 * line do not) would be lost here.
 */
const noPrivate = privatePgUnavailable();
if (noPrivate !== null && process.env.CI === "true")
  throw new Error(`${noPrivate} (CI=true: the crash test may not skip)`);

describe("PostgreSQL crash: acquisitions made together", { skip: noPrivate ?? false }, () => {
  test(
    "leases won together are still held, with their tokens, after the server is killed",
    {
      timeout: 120_000,
    },
    async (t) => {
      const pg = await makePrivatePg({ conf: ["wal_writer_delay = 10000ms"] });
      t.after(() => pg.destroy());
      const url = `${pg.url}?schema=crash`;
      const scopes = Array.from({ length: 12 }, (_, i) => `host:${i}`);
      let store: Store = await openStore(url);
      const statements = countNamedStatements();
      let won;
      try {
        // A first round takes token 1 and releases, so that the crash must keep token 2.
        for (const r of await Promise.all(
          scopes.map((scope) =>
            store.leases.acquire({ scope, ttlMs: 600_000, owner: owner("r-first"), ticket: null }),
          ),
        )) {
          assert.ok(r.ok);
          const rel = await store.leases.release({
            scope: r.lease.scope,
            token: r.lease.token,
            runId: "r-first",
            host: "test-host",
            pid: 4242,
            reason: "done",
          });
          assert.ok(rel.ok);
        }
        won = await Promise.all(
          scopes.map((scope) =>
            store.leases.acquire({ scope, ttlMs: 600_000, owner: owner("r-crash"), ticket: null }),
          ),
        );
      } finally {
        statements.stop();
      }
      assert.ok(statements.named("quiesce_acquire_many") >= 2, "the acquisitions went together");
      for (const r of won) {
        assert.ok(r.ok);
        assert.equal(r.lease.token, 2);
      }
      pg.stop("immediate");
      await store.close().catch(() => undefined);
      pg.start();
      store = await openStore(url);
      try {
        for (const scope of scopes) {
          const got = (await store.leases.getLease(scope)).lease;
          assert.ok(got, `${scope} is still held after the crash`);
          assert.equal(got.owner.runId, "r-crash");
          assert.equal(got.token, 2);
          const again = await store.leases.acquire({
            scope,
            ttlMs: 600_000,
            owner: owner("r-after"),
            ticket: null,
          });
          assert.ok(!again.ok && again.reason === "held", `${scope} cannot be taken again`);
        }
      } finally {
        await store.close();
      }
    },
  );
});
