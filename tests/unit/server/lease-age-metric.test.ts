import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Gauge, Registry } from "prom-client";
import type { LeaseRecord } from "../../../src/domain/lease.js";
import { leaseAgeMetric } from "../../../src/server/lease-age-metric.js";
import { lease } from "../helpers.js";

/** What a prom-client Gauge writes for the same series: the text leaseAgeMetric must equal. */
async function promClient(leases: LeaseRecord[], now: number): Promise<string> {
  const registry = new Registry();
  const g = new Gauge({
    name: "quiesce_lease_heartbeat_age_seconds",
    help: "Seconds since each held lease's last heartbeat",
    labelNames: ["scope", "system"],
    registers: [registry],
  });
  for (const l of leases)
    g.set({ scope: l.scope, system: l.owner.system }, (now - l.heartbeatAt) / 1000);
  return (await registry.metrics()).replace(/\n$/, "");
}

describe("leaseAgeMetric: the text of a prom-client Gauge", () => {
  const now = 1_764_547_200_000;
  const cases: [string, LeaseRecord[]][] = [
    ["no lease (the store is down, or nothing is held)", []],
    [
      "leases of several systems, ages whole, fractional and negative",
      [
        lease({ scope: "host:a", heartbeatAt: now - 12_000 }),
        lease({ scope: "host:b", heartbeatAt: now - 1_234 }),
        lease({ scope: "db/main:1", heartbeatAt: now + 5, owner: { system: "backup" } }),
      ],
    ],
    [
      "label values that need escaping (a foreign, hand-made row)",
      [
        lease({
          scope: "odd",
          heartbeatAt: now - 1,
          owner: { system: 'sys "quoted" \\ back\nslash zürich' },
        }),
      ],
    ],
  ];
  for (const [what, leases] of cases)
    test(what, async () => {
      assert.equal(leaseAgeMetric(leases, now), await promClient(leases, now));
    });
});
