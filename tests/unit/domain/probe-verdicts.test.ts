import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LeaseRecord } from "../../../src/domain/lease.js";
import {
  commandProbeVerdict,
  heartbeatProbe,
  localProcessVerdict,
  runActivityProbe,
  type ProcessFacts,
} from "../../../src/domain/probe-verdicts.js";

const NOW = 500_000;
const lease: LeaseRecord = {
  scope: "s",
  token: 1,
  ttlMs: 10_000,
  acquiredAt: NOW - 60_000,
  heartbeatAt: NOW - 20_000,
  expiresAt: NOW - 10_000,
  owner: {
    runId: "r-1",
    system: "quiesce",
    host: "h1",
    pid: 100,
    pidStart: "111",
    bootId: "boot-A",
    childPid: 200,
    childPidStart: "222",
    command: null,
    note: null,
  },
};

const proc = (
  pid: number,
  recordedStart: string | null,
  o: Partial<ProcessFacts> = {},
): ProcessFacts => ({
  pid,
  recordedStart,
  exists: true,
  currentStart: recordedStart,
  state: "S",
  ...o,
});
const holder = (o: Partial<ProcessFacts> = {}) => proc(100, "111", o);
const child = (o: Partial<ProcessFacts> = {}) => proc(200, "222", o);
const gone = { exists: false, currentStart: null, state: null };

describe("localProcessVerdict", () => {
  const cases: [string, Parameters<typeof localProcessVerdict>[0], string, RegExp][] = [
    [
      "another host: unknown",
      {
        owner: lease.owner,
        thisHost: "h2",
        thisBootId: "boot-A",
        holder: null,
        child: null,
        relinquished: false,
      },
      "unknown",
      /ran on h1, not on this host \(h2\)/,
    ],
    [
      "rebooted: dead",
      {
        owner: lease.owner,
        thisHost: "h1",
        thisBootId: "boot-B",
        holder: holder(),
        child: child(),
        relinquished: false,
      },
      "dead",
      /rebooted.*boot-A, now boot-B/,
    ],
    [
      "holder running: alive",
      {
        owner: lease.owner,
        thisHost: "h1",
        thisBootId: "boot-A",
        holder: holder(),
        child: child(gone),
        relinquished: false,
      },
      "alive",
      /holder pid 100 on h1 is still running/,
    ],
    [
      "holder stopped: alive, hung?",
      {
        owner: lease.owner,
        thisHost: "h1",
        thisBootId: "boot-A",
        holder: holder({ state: "T" }),
        child: child(gone),
        relinquished: false,
      },
      "alive",
      /stopped.*hung\?/,
    ],
    [
      "holder SIGKILLed, command runs on: alive",
      {
        owner: lease.owner,
        thisHost: "h1",
        thisBootId: "boot-A",
        holder: holder(gone),
        child: child(),
        relinquished: false,
      },
      "alive",
      /holder pid 100 is gone but the command it wrapped, pid 200 on h1, still runs/,
    ],
    [
      "both gone: dead",
      {
        owner: lease.owner,
        thisHost: "h1",
        thisBootId: "boot-A",
        holder: holder(gone),
        child: child(gone),
        relinquished: false,
      },
      "dead",
      /holder pid 100 is gone; command pid 200 is gone on h1/,
    ],
    [
      "zombie holder counts as gone",
      {
        owner: lease.owner,
        thisHost: "h1",
        thisBootId: "boot-A",
        holder: holder({ state: "Z" }),
        child: null,
        relinquished: false,
      },
      "dead",
      /holder pid 100 is gone/,
    ],
    [
      "pid reused (start time differs): dead",
      {
        owner: lease.owner,
        thisHost: "h1",
        thisBootId: "boot-A",
        holder: holder({ currentStart: "999" }),
        child: child(gone),
        relinquished: false,
      },
      "dead",
      /pid 100 was reused by another process \(started at 999, recorded 111\)/,
    ],
    [
      "start time unreadable: unknown",
      {
        owner: lease.owner,
        thisHost: "h1",
        thisBootId: "boot-A",
        holder: holder({ currentStart: null }),
        child: null,
        relinquished: false,
      },
      "unknown",
      /start time cannot be read/,
    ],
    [
      "no process recorded: unknown",
      {
        owner: { ...lease.owner, pid: null, childPid: null },
        thisHost: "h1",
        thisBootId: "boot-A",
        holder: null,
        child: null,
        relinquished: false,
      },
      "unknown",
      /no process was recorded/,
    ],
    [
      "a process started under the run, outside the recorded ones, is alive",
      {
        owner: lease.owner,
        thisHost: "h1",
        thisBootId: "boot-A",
        holder: holder(gone),
        child: child(gone),
        relinquished: false,
        runProcesses: [777],
      },
      "alive",
      /pid 777 on h1, started under run r-1, is still running/,
    ],
    [
      "a holder that gave the lease up does not count as alive",
      {
        owner: lease.owner,
        thisHost: "h1",
        thisBootId: "boot-A",
        holder: holder(),
        child: child(gone),
        relinquished: true,
      },
      "unknown",
      /still runs but gave this lease up itself/,
    ],
    [
      "but its command still does",
      {
        owner: lease.owner,
        thisHost: "h1",
        thisBootId: "boot-A",
        holder: holder(),
        child: child(),
        relinquished: true,
      },
      "alive",
      /command pid 200 on h1 is still running/,
    ],
  ];
  for (const [name, facts, verdict, evidence] of cases) {
    test(name, () => {
      const r = localProcessVerdict(facts);
      assert.equal(r.verdict, verdict, r.evidence);
      assert.match(r.evidence, evidence);
      assert.equal(r.probe, "local-process");
    });
  }
});

describe("heartbeat, run-activity and command probes", () => {
  test("heartbeat: live is alive, stale is unknown (never dead)", () => {
    assert.equal(heartbeatProbe({ ...lease, expiresAt: NOW + 1 }, NOW).verdict, "alive");
    const stale = heartbeatProbe(lease, NOW);
    assert.equal(stale.verdict, "unknown");
    assert.match(
      stale.evidence,
      /no heartbeat for 20s \(TTL 10s\): stale, which alone proves nothing/,
    );
  });

  test("run activity after the last heartbeat, within a TTL: alive", () => {
    const r = runActivityProbe(
      lease,
      { last: { at: NOW - 3000, what: "checkpoint 7" }, relinquishedAt: null },
      NOW,
    );
    assert.equal(r.verdict, "alive");
    assert.match(r.evidence, /recorded checkpoint 7 3s ago/);
  });
  test("old activity, or activity before the heartbeat: unknown", () => {
    assert.equal(
      runActivityProbe(lease, { last: { at: NOW - 15_000, what: "x" }, relinquishedAt: null }, NOW)
        .verdict,
      "unknown",
    );
    assert.equal(
      runActivityProbe(lease, { last: { at: NOW - 30_000, what: "x" }, relinquishedAt: null }, NOW)
        .verdict,
      "unknown",
    );
    assert.equal(
      runActivityProbe(lease, { last: null, relinquishedAt: null }, NOW).verdict,
      "unknown",
    );
  });
  test("a run that gave this lease up (late release refused): dead", () => {
    const r = runActivityProbe(
      lease,
      { last: { at: NOW - 100, what: "lease.acquired" }, relinquishedAt: NOW - 500 },
      NOW,
    );
    assert.equal(r.verdict, "dead");
    assert.match(r.evidence, /gave this lease up itself 500ms ago/);
  });

  const cmd: [string, { code: number | null; timedOut: boolean; output: string }, string][] = [
    ["exit 0", { code: 0, timedOut: false, output: "" }, "alive"],
    ["exit 1", { code: 1, timedOut: false, output: "no such process\n" }, "dead"],
    [
      "exit 255 (ssh failed)",
      { code: 255, timedOut: false, output: "ssh: connect: refused" },
      "unknown",
    ],
    ["killed by a signal", { code: null, timedOut: false, output: "" }, "unknown"],
    ["timed out", { code: null, timedOut: true, output: "" }, "unknown"],
  ];
  for (const [name, outcome, verdict] of cmd) {
    test(`command probe: ${name} -> ${verdict}`, () => {
      const r = commandProbeVerdict("ssh 'db-7' kill -0 '4121'", outcome);
      assert.equal(r.verdict, verdict);
      assert.match(r.evidence, /^`ssh 'db-7' kill -0 '4121'`/);
    });
  }
});
