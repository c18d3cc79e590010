import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { openStore } from "../../src/store/open-store.js";
import type { LeaseRecord } from "../../src/domain/lease.js";
import type { Store } from "../../src/store/store.js";
import type { Backend } from "../support/backends.js";
import { owner } from "./lease-store.contract.js";

/**
 * `readLeasesSince`: a reader that keeps the leases (quiesce serve) asks what changed since the
 * versions it knows. Whatever changed a row (an acquisition, a renewal, a command's pid, a
 * release, a takeover, another system's hand edit, by this connection or another), the reader's
 * copy, updated from the answer, must equal listLeases; and what did not change is not sent.
 */
export async function defineLeaseVersionsContract(backend: Backend): Promise<void> {
  const skip = await backend.skip();

  describe(`Lease versions contract: ${backend.name}`, { skip }, () => {
    async function withTwo(tag: string, fn: (a: Store, b: Store, url: string) => Promise<void>) {
      const loc = backend.prepare(tag);
      const a = await openStore(loc.url);
      const b = await openStore(loc.url);
      try {
        await fn(a, b, loc.url);
      } finally {
        await a.close();
        await b.close();
        await loc.cleanup();
      }
    }

    /** A reader's copy: scope -> version and record, updated from each answer. */
    class Copy {
      versions = new Map<string, string>();
      records = new Map<string, LeaseRecord>();
      /** Scopes whose record the last answer carried. */
      sent: string[] = [];
      constructor(private readonly store: Store) {}
      async refresh(): Promise<void> {
        const r = await this.store.leases.readLeasesSince(this.versions);
        const versions = new Map<string, string>();
        const records = new Map<string, LeaseRecord>();
        this.sent = r.scopes.filter((s) => r.changed.has(s));
        assert.equal(this.sent.length, r.changed.size, "changed names only held scopes");
        for (const scope of r.scopes) {
          const c = r.changed.get(scope);
          const rec = c?.lease ?? this.records.get(scope);
          assert.ok(rec, `${scope}: unchanged, but the copy never had it`);
          versions.set(scope, c?.version ?? this.versions.get(scope)!);
          records.set(scope, rec);
        }
        this.versions = versions;
        this.records = records;
      }
      async assertEqualsListing(): Promise<void> {
        const list = await this.store.leases.listLeases();
        assert.deepEqual([...this.records.values()], list.leases);
      }
    }

    const take = async (s: Store, scope: string, runId: string, ttlMs = 60_000) => {
      const r = await s.leases.acquire({ scope, ttlMs, owner: owner(runId), ticket: null });
      assert.ok(r.ok, `${scope} not acquired`);
      return r.lease;
    };

    test("the first read sends every held lease, in scope order, with the clock", () =>
      withTwo("versions-first", async (a, b) => {
        const empty = await a.leases.readLeasesSince(new Map());
        assert.deepEqual(empty.scopes, []);
        assert.equal(empty.changed.size, 0);
        assert.ok(Math.abs(empty.now - (await a.now())) < 5_000, "an empty read has a clock");
        await take(b, "s:2", "r2");
        await take(b, "s:1", "r1");
        await take(b, "s:3", "r3");
        const copy = new Copy(a);
        await copy.refresh();
        assert.deepEqual(copy.sent, ["s:1", "s:2", "s:3"]);
        await copy.assertEqualsListing();
      }));

    test("later reads send only what changed, and the copy stays equal to the listing", () =>
      withTwo("versions-changes", async (a, b, url) => {
        const l1 = await take(b, "s:1", "r1");
        const l2 = await take(b, "s:2", "r2");
        await take(b, "s:3", "r3", 300);
        const l4 = await take(b, "s:4", "r4");
        const copy = new Copy(a);
        await copy.refresh();

        await copy.refresh();
        assert.deepEqual(copy.sent, [], "nothing changed, nothing sent");

        // A renewal by another connection, a command's pid, and a new lease.
        await b.leases.renew([{ scope: "s:1", token: l1.token, ttlMs: 60_000 }]);
        await b.leases.setChild("s:2", l2.token, 4343, "777");
        await take(b, "s:0", "r0");
        await copy.refresh();
        assert.deepEqual(copy.sent, ["s:0", "s:1", "s:2"]);
        await copy.assertEqualsListing();

        // A release, by the reading connection itself; an expired lease taken over.
        const rel = await a.leases.release({
          scope: "s:4",
          token: l4.token,
          runId: "r4",
          host: "test-host",
          pid: 4242,
          reason: "done",
        });
        assert.ok(rel.ok);
        await new Promise((r) => setTimeout(r, 400));
        const stale = (await b.leases.getLease("s:3")).lease!;
        const t = await b.leases.takeOver({
          scope: "s:3",
          staleToken: stale.token,
          ttlMs: 60_000,
          owner: owner("r3b"),
          ticket: null,
          record: {
            previous: {
              token: stale.token,
              owner: stale.owner,
              heartbeatAt: stale.heartbeatAt,
              expiresAt: stale.expiresAt,
            },
            basis: "dead",
            summary: "the owner is gone",
            probes: [{ probe: "local-process", verdict: "dead", evidence: "pid 4242 is gone" }],
          },
        });
        assert.ok(t.ok, "the takeover went through");
        await copy.refresh();
        assert.deepEqual(copy.sent, ["s:3"], "a release sends nothing; it leaves the list");
        assert.deepEqual([...copy.records.keys()], ["s:0", "s:1", "s:2", "s:3"]);
        await copy.assertEqualsListing();

        // Another system edits a row by hand: its expiry, then its note.
        await backend.rawSql(
          url,
          "UPDATE quiesce_leases SET expires_at = NULL WHERE scope = 's:0'",
        );
        await copy.refresh();
        assert.deepEqual(copy.sent, ["s:0"]);
        await backend.rawSql(url, "UPDATE quiesce_leases SET note = 'by hand' WHERE scope = 's:1'");
        await copy.refresh();
        assert.deepEqual(copy.sent, ["s:1"]);
        assert.equal(copy.records.get("s:1")!.owner.note, "by hand");
        await copy.assertEqualsListing();
      }));
  });
}
