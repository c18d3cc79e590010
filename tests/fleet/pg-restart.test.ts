import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { waitFor } from "../support/cli.js";
import { events, showLease } from "../support/e2e.js";
import { fleetSkip, makeFleet, type Fleet } from "../support/fleet/fleet.js";
import {
  assertEveryTargetPatchedOnce,
  createFleetWave,
  explain,
  waitForPatchStart,
  waveRunArgs,
} from "../support/fleet/scenario.js";

/**
 * Scenario 3 of the fleet: the store's PostgreSQL server is restarted (stopped, down for a
 * second, started) while a wave is under way. The replica running it (ctl-a) and the one
 * waiting for it (ctl-b) ride the restart out: the wave completes without a lost lease or a
 * takeover, and every target is patched once.
 */
const skip = fleetSkip();

describe("fleet: PostgreSQL restarted mid-wave", { skip }, () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await makeFleet({ patchSeconds: 1.5 });
  });
  after(() => fleet?.destroy());

  test("both replicas ride out the restart; the wave completes, every target patched once", async () => {
    await createFleetWave(fleet, "w", 2);
    // Renewing every second with a TTL of 10s, a holder keeps its lease through some 8s
    // without the store: the restart must fit in that.
    const flags = ["--ttl", "10s", "--heartbeat", "1s", "--grace", "2s"];
    const a = fleet.startOn("ctl-a", waveRunArgs(fleet, "w", "ctl-a", flags));
    await waitFor(
      "ctl-a to hold the wave",
      async () => (await showLease(fleet.storeUrl, "wave:w"))?.owner.host === "ctl-a",
      30_000,
    );
    const b = fleet.startOn("ctl-b", waveRunArgs(fleet, "w", "ctl-b", [...flags, "--wait", "2m"]));
    await waitForPatchStart(fleet, "t3");
    let bExited = false;
    void b.exited.then(() => (bExited = true));
    fleet.pg.stop("fast");
    const finishedAtStop = fleet.judge().filter((v) => v.finished > 0).length;
    await sleep(1000);
    fleet.pg.start();
    assert.ok(finishedAtStop < 6, "the store went away mid-wave");
    assert.equal(bExited, false, "ctl-b was waiting for the wave when the store went away");

    const ra = await a.done;
    assert.equal(ra.code, 0, explain(ra));
    assert.match(ra.stdout, /wave w completed: 6 succeeded, 0 failed/);
    const rb = await b.done;
    assert.equal(rb.code, 0, explain(rb));
    assert.match(rb.stdout, /wave w is already completed/);

    assertEveryTargetPatchedOnce(fleet);
    const log = await events(fleet.storeUrl);
    const kinds = log.map((e) => e.kind);
    // ctl-a saw the store go: renewals failed and were retried until one succeeded.
    assert.ok(
      log.some((e) => e.kind === "lease.renew_failed" && e.scope === "wave:w"),
      kinds.join(" "),
    );
    assert.ok(!kinds.includes("lease.lost"), kinds.join(" "));
    assert.ok(!kinds.includes("lease.taken_over"), kinds.join(" "));
  });
});
