import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { cli, waitFor } from "../support/cli.js";
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
 * Scenario 1 of the fleet: the replica running a wave on ctl-a is SIGKILLed mid-batch; the
 * replica on ctl-b takes the wave over with proof of death over ssh (`kill -0` of the dead
 * agent's pid, run on ctl-a), long before `--remote-grace` would allow it, and finishes it.
 */
const skip = fleetSkip();

describe("fleet: a replica SIGKILLed mid-batch", { skip }, () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await makeFleet({ patchSeconds: 1.5 });
  });
  after(() => fleet?.destroy());

  test("ctl-b takes the wave over by an ssh probe that finds ctl-a's agent dead; every target patched exactly once", async () => {
    await createFleetWave(fleet, "w", 2);
    // TTL 4s; `--remote-grace` stays at its default (5m): a takeover within the test's time
    // can only come from a probe's proof.
    const flags = ["--ttl", "4s", "--grace", "2s"];
    const a = fleet.startOn("ctl-a", waveRunArgs(fleet, "w", "ctl-a", flags));
    // t3 is the first host of the second batch: ctl-a dies with t3 and t4 under way.
    await waitForPatchStart(fleet, "t3");
    process.kill(a.pid, "SIGKILL");
    const dead = await a.done;
    assert.equal(dead.signal, "SIGKILL", explain(dead));
    const held = await showLease(fleet.storeUrl, "wave:w");
    assert.equal(held?.owner.host, "ctl-a");

    const b = fleet.startOn("ctl-b", waveRunArgs(fleet, "w", "ctl-b", [...flags, "--wait", "60s"]));
    const r = await b.done;
    assert.equal(r.code, 0, explain(r));
    assert.match(r.stdout, /wave w completed: 6 succeeded, 0 failed/);

    assertEveryTargetPatchedOnce(fleet);
    // The hosts ctl-a left under way were settled by the check over ssh, not patched again.
    const status = await cli(["wave", "status", "w", "--json", "--store", fleet.storeUrl]);
    const hosts = (JSON.parse(status.stdout) as { hosts: { host: string; reason: string }[] })
      .hosts;
    assert.equal(
      hosts.find((h) => h.host === "t3")?.reason,
      "the --check command says it is patched",
    );
    const taken = (await events(fleet.storeUrl, "wave:w")).filter(
      (e) => e.kind === "lease.taken_over",
    );
    assert.equal(taken.length, 1, "one takeover of the wave");
    const detail = taken[0]!.detail as {
      basis: string;
      probes: { probe: string; verdict: string; evidence: string }[];
      previous: { owner: { host: string; pid: number } };
    };
    assert.equal(detail.basis, "probe_dead", JSON.stringify(detail));
    assert.equal(detail.previous.owner.host, "ctl-a");
    const byCommand = detail.probes.find((p) => p.probe === "command");
    assert.equal(byCommand?.verdict, "dead", JSON.stringify(detail.probes));
    // The probe ran on ctl-a, over ssh, about the dead agent's own pid.
    assert.ok(
      byCommand.evidence.includes(`ctl-a kill -0 ${detail.previous.owner.pid}\``) &&
        byCommand.evidence.includes(`(${detail.previous.owner.pid}) - No such process`),
      byCommand.evidence,
    );
    assert.equal(detail.previous.owner.pid, a.pid, "the pid probed is the SIGKILLed agent's");
    await waitFor(
      "ctl-b to release the wave",
      async () => (await showLease(fleet.storeUrl, "wave:w")) === null,
    );
  });
});
