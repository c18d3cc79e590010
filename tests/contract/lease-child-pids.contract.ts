import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { Backend } from "../support/backends.js";
import { owner } from "./lease-store.contract.js";

/**
 * `setChild` called for many leases at once (a wave starting its hosts): PostgreSQL records
 * them in one statement. Each is still fenced by its own lease's token (I3): a stale token, an
 * expired or released lease is refused with its reason, and changes nothing, while the others
 * are written.
 */
export async function defineLeaseChildPidsContract(backend: Backend): Promise<void> {
  const skip = await backend.skip();

  describe(`Command pids contract: ${backend.name}`, { skip }, () => {
    test("pids set together are each fenced by their own lease", async () => {
      const loc = backend.prepare("child-pids");
      const store: Store = await openStore(loc.url);
      try {
        const take = async (scope: string, ttlMs = 60_000) => {
          const r = await store.leases.acquire({
            scope,
            ttlMs,
            owner: owner(`r-${scope}`),
            ticket: null,
          });
          assert.ok(r.ok);
          return r.lease;
        };
        const leases = await Promise.all(["h:1", "h:2", "h:3", "h:4"].map((s) => take(s)));
        const short = await take("h:5", 200);
        const gone = await take("h:6");
        const rel = await store.leases.release({
          scope: "h:6",
          token: gone.token,
          runId: "r-h:6",
          host: "test-host",
          pid: 4242,
          reason: "done",
        });
        assert.ok(rel.ok);
        await new Promise((r) => setTimeout(r, 300));
        // Distinct leases (one statement on PostgreSQL), two of them no longer current.
        const results = await Promise.all([
          ...leases.map((l, i) => store.leases.setChild(l.scope, l.token, 5000 + i, `${i}`)),
          store.leases.setChild("h:5", short.token, 6002, "y"), // expired
          store.leases.setChild("h:6", gone.token, 6003, "z"), // released
        ]);
        assert.deepEqual(
          results.map((r) => (r.ok ? "ok" : r.reason)),
          ["ok", "ok", "ok", "ok", "expired", "not_held"],
        );
        // The same lease twice in one go, once with a token it never had.
        const twice = await Promise.all([
          store.leases.setChild("h:2", leases[1]!.token + 1, 6001, "x"),
          store.leases.setChild("h:2", leases[1]!.token, 5001, "1"),
        ]);
        assert.deepEqual(
          twice.map((r) => r.ok),
          [false, true],
        );
        for (const [i, l] of leases.entries()) {
          const got = (await store.leases.getLease(l.scope)).lease!;
          assert.equal(got.owner.childPid, 5000 + i, `${l.scope}'s own pid`);
          assert.equal(got.owner.childPidStart, `${i}`);
        }
        assert.equal((await store.leases.getLease("h:5")).lease!.owner.childPid, null);
      } finally {
        await store.close();
        await loc.cleanup();
      }
    });
  });
}
