import assert from "node:assert/strict";
import { test } from "node:test";
import { cli } from "../support/cli.js";
import { eachBackend, withLocation } from "../support/e2e.js";
import type { CrashPoint } from "../../src/fault/crash-points.js";
import { createWave, explain, makeFleet, runArgs, waveStatus } from "./wave-helpers.js";

/**
 * The agent SIGKILLed at every step of a host (QUIESCE_CRASH_AT strikes at the first host),
 * then a second agent resumes with --check: whatever the step, every host is patched exactly
 * once and the wave completes. The steps, in the order a host goes through them.
 */
const POINTS: { point: CrashPoint; settled: RegExp }[] = [
  // Nothing journalled: the host starts from scratch.
  { point: "wave.host-running", settled: /^the patch command exited 0$/ },
  // PLANNED only: the journal sends it (nothing had left).
  { point: "effect.before-dispatch", settled: /^the patch command exited 0$/ },
  // Sent, no answer recorded: --check says it is patched.
  { point: "effect.after-dispatch", settled: /^the --check command says it is patched$/ },
  { point: "effect.after-ack", settled: /^the --check command says it is patched$/ },
  { point: "journal.checkpoint-write", settled: /^the --check command says it is patched$/ },
  // The patch result is recorded: only the health gate is repeated.
  { point: "wave.health-passed", settled: /^the patch command exited 0$/ },
  // The run is complete: only the host's row is written.
  { point: "wave.before-host-final", settled: /^its run completed: patched and healthy$/ },
];

await eachBackend("wave: SIGKILL at every step of a host, then resume", (b) => {
  for (const { point, settled } of POINTS)
    test(`killed at ${point}: every host patched exactly once, the wave completes`, (t) =>
      withLocation(b, `wave-crash-${point}`, async (url) => {
        const fleet = makeFleet(3);
        t.after(fleet.cleanup);
        await createWave(url, "w", fleet, ["--batch", "1"]);
        const flags = ["--check", fleet.check, "--health", "true"];
        const killed = await cli(runArgs(url, "w", fleet, flags), { QUIESCE_CRASH_AT: point });
        assert.equal(killed.signal, "SIGKILL", explain(killed));
        const at = await waveStatus(url, "w");
        assert.equal(at.hosts[0]!.state, "running", "the agent died with h1 in flight");
        assert.deepEqual(
          at.hosts.slice(1).map((h) => h.state),
          ["pending", "pending"],
        );

        const r = await cli([...runArgs(url, "w", fleet, flags), "--wait", "20s"]);
        assert.equal(r.code, 0, explain(r));
        assert.match(r.stdout, /wave w completed: 3 succeeded, 0 failed/);
        for (const h of ["h1", "h2", "h3"])
          assert.equal(
            fleet.count("patched").get(h),
            1,
            `${h} patched once: ${fleet.lines().join(", ")}`,
          );
        const s = await waveStatus(url, "w");
        assert.match(s.hosts[0]!.reason ?? "", settled);
        assert.equal(s.agent?.state, "STOPPED");
      }));
});
