import assert from "node:assert/strict";
import { test } from "node:test";
import { isQuiesceError, openLeases } from "../../src/index.js";
import { eachBackend, events, showLease, withLocation } from "../support/e2e.js";

/** The library API an agent written in TypeScript uses, against a real store. */
await eachBackend("library: leases for agents", (b) => {
  test("`await using` releases the lease when the block ends", () =>
    withLocation(b, "using", async (url) => {
      await using leases = await openLeases({ store: url });
      {
        await using lease = await leases.acquire("patch:wave", { ttl: "5s" });
        assert.equal(lease.token, 1);
        assert.equal(lease.signal.aborted, false);
        assert.ok(
          lease.remainingMs() > 4000 && lease.remainingMs() <= 5000 - lease.timing.safetyMarginMs,
        );
        assert.ok(await showLease(url, "patch:wave"));
      }
      assert.equal(await showLease(url, "patch:wave"), null);
    }));

  test("contention is a result from tryAcquire and a LEASE_HELD error from acquire", () =>
    withLocation(b, "contend", async (url) => {
      await using a = await openLeases({ store: url });
      await using other = await openLeases({ store: url });
      const held = await a.acquire("s", { ttl: "5s" });
      const r = await other.tryAcquire("s", { ttl: "5s" });
      assert.equal(r.ok, false);
      assert.ok(!r.ok && r.reason === "held" && r.holder?.token === held.token);
      assert.match(!r.ok ? r.message : "", /s is held by run r-/);
      await assert.rejects(
        other.acquire("s"),
        (e) => isQuiesceError(e, "LEASE_HELD") && e.details.reason === "held",
      );
    }));

  test("a waiter gets the lease when the holder releases it", () =>
    withLocation(b, "wait", async (url) => {
      await using a = await openLeases({ store: url });
      await using w = await openLeases({ store: url });
      const held = await a.acquire("s", { ttl: "5s" });
      const progress: string[] = [];
      const waiting = w.acquire("s", {
        ttl: "5s",
        wait: "10s",
        onWait: (p) => progress.push(p.message),
      });
      setTimeout(() => void held.release("done"), 300);
      const got = await waiting;
      assert.equal(got.token, 2);
      assert.ok(progress.length >= 1 && /held by/.test(progress[0]!));
    }));

  test("when the store refuses a renewal the signal aborts, fenced writes throw, release is refused", () =>
    withLocation(b, "lost", async (url) => {
      await using leases = await openLeases({ store: url });
      const lease = await leases.acquire("s", { ttl: "2s", heartbeat: "100ms" });
      await lease.putState("step", "1");
      // Somebody (an operator's manual edit, a takeover) moves the lease on under us.
      await b.rawSql(url, "UPDATE quiesce_leases SET token = token + 1 WHERE scope = 's'");
      await new Promise<void>((resolve, reject) => {
        // The refusal may already have come while the UPDATE's connection was closing.
        if (lease.signal.aborted) return resolve();
        const guard = setTimeout(() => reject(new Error("signal did not abort")), 3000);
        lease.signal.addEventListener("abort", () => (clearTimeout(guard), resolve()), {
          once: true,
        });
      });
      assert.ok(isQuiesceError(lease.signal.reason, "LEASE_LOST"));
      assert.throws(
        () => lease.assertHeld(),
        (e) => isQuiesceError(e, "LEASE_LOST"),
      );
      await assert.rejects(lease.putState("step", "2"), (e) => isQuiesceError(e, "LEASE_LOST"));
      const r = await lease.release();
      assert.ok(!r.ok && r.reason === "token_mismatch");
      assert.ok((await events(url, "s")).some((e) => e.kind === "lease.lost"));
    }));

  test("closing the Leases instance releases everything it holds (I7)", () =>
    withLocation(b, "close", async (url) => {
      const leases = await openLeases({ store: url });
      await leases.acquire("a", { ttl: "5s" });
      await leases.acquire("b", { ttl: "5s" });
      assert.equal(leases.active.length, 2);
      await leases.close();
      assert.equal(await showLease(url, "a"), null);
      assert.equal(await showLease(url, "b"), null);
    }));
});
