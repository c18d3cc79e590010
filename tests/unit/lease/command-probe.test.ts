import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LeaseRecord } from "../../../src/domain/lease.js";
import { fillProbeTemplate, probeCommand } from "../../../src/lease/probes/command-probe.js";

const lease: LeaseRecord = {
  scope: "host:db-7",
  token: 3,
  ttlMs: 1000,
  acquiredAt: 0,
  heartbeatAt: 0,
  expiresAt: 0,
  owner: {
    runId: "r-x",
    system: "quiesce",
    host: "db-7; rm -rf /",
    pid: 4121,
    pidStart: null,
    bootId: null,
    childPid: null,
    childPidStart: null,
    command: null,
    note: null,
  },
};

describe("command probe", () => {
  test("placeholders are filled in shell-quoted, so a stored value cannot inject a command", () => {
    assert.equal(
      fillProbeTemplate("ssh {host} kill -0 {pid} {child_pid} # {run_id} {scope}", lease),
      "ssh 'db-7; rm -rf /' kill -0 4121 '' # r-x host:db-7",
    );
    const quoted = fillProbeTemplate("echo {host}", {
      ...lease,
      owner: { ...lease.owner, host: "it's" },
    });
    assert.equal(quoted, `echo 'it'\\''s'`);
  });

  test("exit codes map to verdicts and the filled-in values reach the command", async () => {
    assert.equal((await probeCommand("test {pid} = 4121", lease, 5000)).verdict, "alive");
    assert.equal((await probeCommand("exit 1", lease, 5000)).verdict, "dead");
    const r = await probeCommand("echo unreachable >&2; exit 255", lease, 5000);
    assert.equal(r.verdict, "unknown");
    assert.match(r.evidence, /exited 255.*unreachable/);
  });

  test("a probe that hangs is killed at its timeout and says unknown", async () => {
    const t0 = Date.now();
    const r = await probeCommand("sleep 30", lease, 200);
    assert.equal(r.verdict, "unknown");
    assert.match(r.evidence, /timed out/);
    assert.ok(Date.now() - t0 < 10_000, "it did not wait for the command");
  });
});
