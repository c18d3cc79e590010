import assert from "node:assert/strict";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "node:test";
import { postgresBackend } from "../support/backends.js";
import { cli, startCli, waitFor } from "../support/cli.js";
import { showLease, withLocation } from "../support/e2e.js";
import { startTcpProxy } from "../support/tcp-proxy.js";
import {
  createWave,
  explain,
  hostStates,
  makeFleet,
  runArgs,
  waitForLine,
  waveStatus,
} from "./wave-helpers.js";

const skip = await postgresBackend.skip();

/**
 * PostgreSQL unreachable for longer than the TTL while a host is being patched: the agent
 * must stop the patch before its leases can expire on the server (I4) and write nothing; once
 * the store is back, the next agent takes the wave over and settles that host.
 */
describe("wave on PostgreSQL when the store goes away", { skip }, () => {
  test("cut past the TTL mid-patch: the patch is stopped before the server-side expiry, exit 76; the next agent settles the host", async (t) => {
    const fleet = makeFleet(3, { gated: ["h2"] });
    t.after(fleet.cleanup);
    // The fleet's patch, but noting when it is told to stop.
    const patch = join(fleet.dir, "patch-trap.sh");
    writeFileSync(
      patch,
      `#!/bin/sh\ntrap 'date +%s%3N > ${fleet.dir}/term-$1; exit 1' TERM\n${fleet.patch.split(" ")[0]} "$1" &\nwait $!\n`,
    );
    chmodSync(patch, 0o755);
    const proxy = await startTcpProxy(5432);
    t.after(() => proxy.close());
    await withLocation(postgresBackend, "wave-cut", async (directUrl) => {
      const viaProxy = new URL(directUrl);
      viaProxy.port = String(proxy.port);
      await createWave(directUrl, "w", fleet, ["--batch", "1"]);
      const agent = startCli([
        ...runArgs(viaProxy.toString(), "w", fleet, ["--check", fleet.check]),
        "--patch",
        `${patch} {host}`,
        "--ttl",
        "2s",
      ]);
      await waitFor("h2's patch to start", () => fleet.lines().includes("start h2"), 20_000);
      proxy.cut();
      const r = await agent.done;
      assert.equal(r.code, 76, explain(r));
      const term = join(fleet.dir, "term-h2");
      await waitFor(`h2's patch to be told to stop\n${explain(r)}`, () => existsSync(term), 5000);
      const stoppedAt = Number(readFileSync(term, "utf8"));
      const wave = await showLease(directUrl, "wave:w");
      const host = await showLease(directUrl, "host:h2");
      assert.ok(wave && host, "neither lease could be released: the store was unreachable");
      for (const l of [wave, host])
        assert.ok(
          stoppedAt < Date.parse(l.expiresAt),
          `the patch stopped ${Date.parse(l.expiresAt) - stoppedAt} ms before ${l.scope} expired on the server`,
        );
      const at = await waveStatus(directUrl, "w");
      assert.deepEqual(hostStates(at), { h1: "succeeded", h2: "running", h3: "pending" });

      fleet.open("h2");
      const next = await cli([
        ...runArgs(directUrl, "w", fleet, ["--check", fleet.check]),
        "--wait",
        "20s",
      ]);
      assert.equal(next.code, 0, explain(next));
      assert.deepEqual([...fleet.count("patched").entries()].sort(), [
        ["h1", 1],
        ["h2", 1],
        ["h3", 1],
      ]);
    });
  });

  // The store away for less than the TTL, and a patch ends meanwhile: its journal write and
  // the host's final state cannot reach the store. Nothing was sent, so the agent sends them
  // again once it can (within the lease) instead of stopping the wave. Both ways a store can be
  // away: a stopped server (the port closed, ECONNREFUSED) and a connection dropped as it opens.
  for (const how of ["down", "cut"] as const) {
    test(`away (${how}) for a moment while a patch ends: its result is written once the store is back, the wave completes`, async (t) => {
      const fleet = makeFleet(3, { gated: ["h2"] });
      t.after(fleet.cleanup);
      const proxy = await startTcpProxy(5432);
      t.after(() => proxy.close());
      await withLocation(postgresBackend, `wave-away-${how}`, async (directUrl) => {
        const viaProxy = new URL(directUrl);
        viaProxy.port = String(proxy.port);
        await createWave(directUrl, "w", fleet, ["--batch", "1"]);
        const agent = startCli([
          ...runArgs(viaProxy.toString(), "w", fleet, ["--check", fleet.check]),
          "--ttl",
          "10s",
        ]);
        await waitForLine(fleet, "start h2");
        if (how === "down") await proxy.down();
        else proxy.cut();
        fleet.open("h2");
        await waitForLine(fleet, "patched h2");
        await sleep(1500); // the acknowledgement is tried, and refused, while the store is away
        await proxy.restore();
        const r = await agent.done;
        assert.equal(r.code, 0, explain(r));
        assert.match(r.stdout, /wave w completed: 3 succeeded, 0 failed/);
        assert.deepEqual(hostStates(await waveStatus(directUrl, "w")), {
          h1: "succeeded",
          h2: "succeeded",
          h3: "succeeded",
        });
        assert.deepEqual([...fleet.count("patched").entries()].sort(), [
          ["h1", 1],
          ["h2", 1],
          ["h3", 1],
        ]);
      });
    });
  }
});
