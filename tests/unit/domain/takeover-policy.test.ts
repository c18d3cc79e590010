import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LeaseRecord } from "../../../src/domain/lease.js";
import type { ProbeResult, ProbeVerdict } from "../../../src/domain/probe.js";
import { decideTakeover, type TakeoverPolicy } from "../../../src/domain/takeover-policy.js";

const NOW = 1_000_000;
const TTL = 30_000;

function lease(over: Partial<LeaseRecord> = {}, system = "quiesce"): LeaseRecord {
  return {
    scope: "host:db-7",
    token: 4,
    ttlMs: TTL,
    acquiredAt: NOW - 200_000,
    heartbeatAt: NOW - 95_000,
    expiresAt: NOW - 65_000,
    owner: {
      runId: "r-1",
      system,
      host: "db-7",
      pid: 4121,
      pidStart: "1",
      bootId: "b",
      childPid: null,
      childPidStart: null,
      command: null,
      note: null,
    },
    ...over,
  };
}

const probe = (name: string, verdict: ProbeVerdict): ProbeResult => ({
  probe: name,
  verdict,
  evidence: `${name} says ${verdict}`,
});
const hb = probe("heartbeat", "unknown");
const policy: TakeoverPolicy = {
  system: "quiesce",
  remoteGraceMs: 300_000,
  forceUnknown: false,
  allowForeign: false,
};

describe("decideTakeover (I5, I6)", () => {
  const cases: {
    name: string;
    lease?: LeaseRecord;
    probes: ProbeResult[];
    policy?: Partial<TakeoverPolicy>;
    lastSignAt?: number;
    command?: boolean;
    expect: string;
  }[] = [
    {
      name: "a live lease is never taken, whatever the probes",
      lease: lease({ expiresAt: NOW + 1 }),
      probes: [probe("local-process", "dead")],
      expect: "refuse:not_expired",
    },
    {
      name: "expiry exactly now counts as expired",
      lease: lease({ expiresAt: NOW }),
      probes: [hb, probe("local-process", "dead")],
      expect: "take_over:probe_dead",
    },
    {
      name: "a foreign lease is never taken, even with its owner dead",
      lease: lease({}, "backup"),
      probes: [hb, probe("local-process", "dead")],
      expect: "refuse:foreign",
    },
    {
      name: "a foreign lease is broken only with allowForeign",
      lease: lease({}, "backup"),
      probes: [hb, probe("local-process", "dead")],
      policy: { allowForeign: true },
      expect: "take_over:probe_dead",
    },
    {
      name: "any probe alive refuses, even if another says dead",
      probes: [hb, probe("local-process", "dead"), probe("command", "alive")],
      expect: "refuse:owner_alive",
    },
    {
      name: "alive wins over force",
      probes: [hb, probe("local-process", "alive")],
      policy: { forceUnknown: true },
      expect: "refuse:owner_alive",
    },
    {
      name: "one dead probe and none alive: take over",
      probes: [hb, probe("local-process", "dead"), probe("run-activity", "unknown")],
      expect: "take_over:probe_dead",
    },
    {
      name: "heartbeat alone never suffices",
      probes: [hb],
      policy: { remoteGraceMs: null },
      expect: "refuse:death_unproven",
    },
    {
      name: "all unknown, grace not yet over",
      probes: [hb, probe("local-process", "unknown")],
      lastSignAt: NOW - 95_000,
      expect: "refuse:death_unproven",
    },
    {
      name: "all unknown, silent past TTL + grace: presumed dead by policy",
      probes: [hb, probe("local-process", "unknown")],
      lastSignAt: NOW - TTL - 300_000,
      expect: "take_over:remote_grace",
    },
    {
      name: "recent run activity postpones the grace",
      probes: [hb, probe("local-process", "unknown")],
      lastSignAt: NOW - TTL - 299_000,
      expect: "refuse:death_unproven",
    },
    {
      name: "a command probe that cannot reach the owner (a partition): the grace rule applies",
      probes: [hb, probe("command", "unknown")],
      lastSignAt: NOW - TTL - 300_000,
      command: true,
      expect: "take_over:remote_grace",
    },
    {
      name: "a command probe that cannot reach the owner, grace not yet over: refused",
      probes: [hb, probe("command", "unknown")],
      lastSignAt: NOW - TTL - 299_000,
      command: true,
      expect: "refuse:death_unproven",
    },
    {
      name: "a command probe that cannot reach the owner, grace disabled: refused",
      probes: [hb, probe("command", "unknown")],
      lastSignAt: 0,
      command: true,
      policy: { remoteGraceMs: null },
      expect: "refuse:death_unproven",
    },
    {
      name: "grace disabled: unknown stays unknown",
      probes: [hb, probe("local-process", "unknown")],
      lastSignAt: 0,
      policy: { remoteGraceMs: null },
      expect: "refuse:death_unproven",
    },
    {
      name: "force overrides unknown",
      probes: [hb, probe("local-process", "unknown")],
      policy: { remoteGraceMs: null, forceUnknown: true },
      expect: "take_over:forced_unknown",
    },
    {
      name: "force overrides unknown from a command probe",
      probes: [hb, probe("command", "unknown")],
      command: true,
      policy: { forceUnknown: true },
      expect: "take_over:forced_unknown",
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const l = c.lease ?? lease();
      const d = decideTakeover(
        {
          lease: l,
          storeNow: NOW,
          probes: c.probes,
          lastSignAt: c.lastSignAt ?? l.heartbeatAt,
          commandProbeConfigured: c.command ?? false,
        },
        { ...policy, ...c.policy },
      );
      assert.equal(
        `${d.action}:${d.action === "take_over" ? d.basis : d.reason}`,
        c.expect,
        d.summary,
      );
      assert.deepEqual(d.probes, c.probes, "every probe's evidence travels with the decision");
    });
  }

  test("a refusal because of an alive probe names that probe and how long the owner has been silent", () => {
    const d = decideTakeover(
      {
        lease: lease(),
        storeNow: NOW,
        probes: [
          hb,
          {
            probe: "local-process",
            verdict: "alive",
            evidence: "holder pid 4121 on db-7 is alive but stopped (SIGSTOP or a debugger): hung?",
          },
        ],
        lastSignAt: 0,
        commandProbeConfigured: false,
      },
      policy,
    );
    assert.equal(
      d.summary,
      "holder pid 4121 on db-7 is alive but stopped (SIGSTOP or a debugger): hung?; no renewal of host:db-7 for 1m35s (local-process probe)",
    );
  });

  test("a foreign refusal names the system and says to coordinate", () => {
    const d = decideTakeover(
      {
        lease: lease({}, "backup"),
        storeNow: NOW,
        probes: [hb],
        lastSignAt: 0,
        commandProbeConfigured: false,
      },
      policy,
    );
    assert.match(
      d.summary,
      /held by system "backup" \(run r-1 of system "backup", on db-7, pid 4121\).*coordinate with backup/,
    );
  });
});
