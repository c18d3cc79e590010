import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { cli } from "../support/cli.js";
import { events, showLease, type EventJson } from "../support/e2e.js";
import { fleetSkip, makeFleet, type Fleet } from "../support/fleet/fleet.js";
import type { ControlHost, TargetHost } from "../support/fleet/names.js";
import {
  assertEveryTargetPatchedOnce,
  createFleetWave,
  explain,
  waitForPatchStart,
  waveRunArgs,
} from "../support/fleet/scenario.js";

/**
 * Scenario 4 of the fleet: ctl-b's clock is an hour off (Debian's faketime, which shifts the
 * wall clock of everything it starts: node, the probe's ssh, the patch's ssh). Expiry and the
 * remote grace are judged on the store's clock (I10): an hour ahead, ctl-b does not take over a
 * wave an hour early; an hour behind, it does not wait an hour. Each test kills the replica on
 * ctl-a mid-wave and lets ctl-b, skewed, take over.
 */
const skip = fleetSkip();

interface TakeoverDetail {
  basis: string;
  previous: { expiresAt: number | string; owner: { host: string } };
}

/** When the store says a takeover happened, and what it replaced. */
function takeoverOf(log: EventJson[], scope: string) {
  const taken = log.filter((e) => e.kind === "lease.taken_over" && e.scope === scope);
  assert.equal(taken.length, 1, `one takeover of ${scope}`);
  const e = taken[0]! as EventJson & { at: number | string };
  const detail = e.detail as unknown as TakeoverDetail;
  return { at: ms(e.at), expiresAt: ms(detail.previous.expiresAt), detail };
}

const ms = (v: number | string) => (typeof v === "number" ? v : Date.parse(v));

describe("fleet: a replica whose clock is an hour off", { skip }, () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await makeFleet({ patchSeconds: 1 });
  });
  after(() => fleet?.destroy());

  /** ctl-a runs WAVE and is SIGKILLed once the second host's patch started. */
  async function killMidWave(wave: string, hosts: TargetHost[], flags: string[]) {
    await createFleetWave(fleet, wave, 1, hosts);
    const a = fleet.startOn("ctl-a", waveRunArgs(fleet, wave, "ctl-a", flags));
    await waitForPatchStart(fleet, hosts[1]!);
    process.kill(a.pid, "SIGKILL");
    await a.exited;
    const held = await showLease(fleet.storeUrl, `wave:${wave}`);
    assert.equal(held?.owner.host, "ctl-a" satisfies ControlHost);
  }

  test("an hour ahead, without a probe: no takeover before expiry + remote grace on the store's clock", async () => {
    const hosts: TargetHost[] = ["t1", "t2", "t3"];
    const flags = ["--ttl", "4s", "--grace", "1s"];
    await killMidWave("ahead", hosts, flags);
    // Judged on ctl-b's clock, ctl-a's lease would be an hour past its expiry, far beyond the
    // remote grace: ctl-b would take the wave over at once.
    const b = fleet.startOn(
      "ctl-b",
      waveRunArgs(fleet, "ahead", "ctl-b", [...flags, "--remote-grace", "6s", "--wait", "90s"], {
        probe: false,
      }),
      { faketime: "+1h" },
    );
    const r = await b.done;
    assert.equal(r.code, 0, explain(r));
    assert.match(r.stdout, /wave ahead completed: 3 succeeded, 0 failed/);
    const t = takeoverOf(await events(fleet.storeUrl, "wave:ahead"), "wave:ahead");
    assert.equal(t.detail.basis, "remote_grace");
    assert.ok(
      t.at >= t.expiresAt + 6000,
      `taken over ${t.at - t.expiresAt} ms after the expiry; the remote grace is 6000 ms`,
    );
    assertEveryTargetPatchedOnce(fleet, hosts);
  });

  test("an hour behind, with an ssh probe: the takeover comes at the store's expiry, not an hour later", async () => {
    const hosts: TargetHost[] = ["t4", "t5", "t6"];
    const flags = ["--ttl", "4s", "--grace", "1s"];
    await killMidWave("behind", hosts, flags);
    const b = fleet.startOn(
      "ctl-b",
      waveRunArgs(fleet, "behind", "ctl-b", [...flags, "--wait", "60s"]),
      { faketime: "-1h" },
    );
    const r = await b.done;
    assert.equal(r.code, 0, explain(r));
    assert.match(r.stdout, /wave behind completed: 3 succeeded, 0 failed/);
    const t = takeoverOf(await events(fleet.storeUrl, "wave:behind"), "wave:behind");
    assert.equal(t.detail.basis, "probe_dead");
    assert.ok(t.at >= t.expiresAt, `taken over ${t.expiresAt - t.at} ms before the expiry`);
    assertEveryTargetPatchedOnce(fleet, hosts);
    const list = await cli(["lock", "list", "--json", "--store", fleet.storeUrl]);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual((JSON.parse(list.stdout) as { leases: unknown[] }).leases, []);
  });
});
