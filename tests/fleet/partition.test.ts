import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cli } from "../support/cli.js";
import { events } from "../support/e2e.js";
import { fleetSkip, makeFleet, type Fleet } from "../support/fleet/fleet.js";
import { createFleetWave, explain, waitForPatchStart } from "../support/fleet/scenario.js";
import { TARGET_HOSTS } from "../support/fleet/names.js";

/**
 * Scenario 2 of the fleet: ctl-a's link goes down while it patches t1 and t2 over ssh. ctl-a
 * fences itself; its patches are stopped on the targets themselves by the remote guard (the
 * ssh session is cut, no `arm` line comes, the host lease's deadline passes there); ctl-b's
 * probe cannot reach ctl-a (unknown), so it takes the wave over after `--remote-grace`, finds
 * t1 and t2 "not patched" by the check (the guard stopped the patch before it ended), patches
 * them again, and finishes. Judged from the targets' own records: no two patches of a host
 * ever overlap, each finishes exactly once, and the second dispatches are events.
 */
const skip = fleetSkip();
const TTL = "3s";
const GRACE = "1s";
const REMOTE_GRACE = "5s";

describe("fleet: a replica partitioned mid-patch", { skip }, () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await makeFleet();
  });
  after(() => fleet?.destroy());

  test("the cut-off replica's patches are stopped on the targets; ctl-b takes over after --remote-grace; no patch overlaps", async () => {
    await createFleetWave(fleet, "w", 2);
    const args = (host: "ctl-a" | "ctl-b", extra: string[] = []) => [
      ...["wave", "run", "w", "--via", fleet.via],
      ...["--patch", fleet.remotePatch(8), "--check", fleet.remoteCheck],
      ...["--probe", fleet.probeCommand, "--remote-grace", REMOTE_GRACE],
      ...["--ttl", TTL, "--grace", GRACE, "--log-dir", join(fleet.root, "logs", host)],
      ...["--store", fleet.storeUrl, ...extra],
    ];
    const a = fleet.startOn("ctl-a", args("ctl-a"));
    await waitForPatchStart(fleet, "t1");
    await waitForPatchStart(fleet, "t2");
    const cutAt = Date.now();
    fleet.setLink("ctl-a", false);

    const b = fleet.startOn("ctl-b", args("ctl-b", ["--wait", "90s"]));
    const fenced = await a.done;
    const fencedAfterMs = Date.now() - cutAt;
    assert.equal(fenced.code, 76, explain(fenced));
    // It stops within its TTL and grace (and the store's close), not after store timeouts.
    assert.ok(
      fencedAfterMs < 3000 + 1000 + 6000,
      `ctl-a exited ${fencedAfterMs} ms after the cut: ${explain(fenced)}`,
    );

    const r = await b.done;
    if (r.code !== 0) {
      const log = (await events(fleet.storeUrl))
        .filter((e) => e.scope === "wave:w" || e.kind.startsWith("lease."))
        .map(
          (e) =>
            `${(e as unknown as { at: string }).at} ${e.kind} ${e.scope} #${e.token} ${e.message}`,
        )
        .join("\n");
      assert.fail(`${explain(r)}\n--- events\n${log}`);
    }
    assert.match(r.stdout, /wave w completed: 6 succeeded, 0 failed/);

    const verdicts = fleet.judge();
    const all = verdicts
      .map(
        (v) =>
          `${v.host}: ${v.patches.map((p) => `[${p.token} ${p.start}-${p.end ?? (p.stopped ? `stopped ${p.stopped}` : "?")}]`).join(" ")}`,
      )
      .join("\n");
    for (const v of verdicts) {
      assert.deepEqual(v.overlaps, [], `two patches of ${v.host} overlapped:\n${all}`);
      assert.deepEqual(v.misdirected, [], all);
      assert.equal(v.finished, 1, `${v.host} finished ${v.finished} patches:\n${all}`);
    }
    // t1 and t2 were stopped on the targets by their remote guards (started twice, the first
    // stopped before the second began); the rest ran once.
    for (const h of TARGET_HOSTS) {
      const v = verdicts.find((x) => x.host === h)!;
      const cutOff = h === "t1" || h === "t2";
      assert.equal(v.started, cutOff ? 2 : 1, `${h}:\n${all}`);
      if (cutOff)
        assert.ok(v.patches[0]!.stopped !== null, `${h}'s first patch was stopped:\n${all}`);
    }
    const taken = (await events(fleet.storeUrl, "wave:w")).filter(
      (e) => e.kind === "lease.taken_over",
    );
    assert.equal(taken.length, 1);
    assert.equal((taken[0]!.detail as { basis: string }).basis, "remote_grace");
    const all_events = await events(fleet.storeUrl);
    const redispatched = all_events
      .filter((e) => e.kind === "journal.effect_redispatch")
      .map((e) => (e.detail as { key: string }).key)
      .sort();
    assert.deepEqual(redispatched, ["wave:w:host:t1:patch", "wave:w:host:t2:patch"]);
    const status = await cli(["wave", "status", "w", "--json", "--store", fleet.storeUrl]);
    const hosts = (JSON.parse(status.stdout) as { hosts: { host: string; reason: string }[] })
      .hosts;
    assert.match(
      hosts.find((h) => h.host === "t1")!.reason,
      /dispatch 2: the --check command said an earlier one had not landed/,
    );
  });
});
