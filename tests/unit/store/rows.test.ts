import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  LEASE_LIST_COLUMNS,
  leaseFromListRow,
  leaseFromRow,
  type LeaseListRow,
  type LeaseRow,
} from "../../../src/store/rows.js";

/** The same row as an object (as a lease is read alone) and as a listing's array. */
function both(row: LeaseRow): [LeaseRow, LeaseListRow] {
  const r = row as unknown as Record<string, unknown>;
  return [row, LEASE_LIST_COLUMNS.map((c) => r[c] ?? null) as LeaseListRow];
}

const full: LeaseRow = {
  scope: "host:db-7",
  token: 12,
  held: 1,
  run_id: "r-1",
  system: "backup",
  host: "db-7",
  pid: 4121,
  pid_start: "987654",
  boot_id: "boot-1",
  child_pid: 4130,
  child_pid_start: "987700",
  command: "apt-get upgrade",
  note: "zürich",
  ttl_ms: 30_000,
  acquired_at: 1_764_547_200_000,
  heartbeat_at: 1_764_547_210_000,
  expires_at: 1_764_547_240_000,
  takeover_evidence: JSON.stringify({ basis: "dead", summary: "gone", probes: [] }),
};

describe("leaseFromListRow: the record leaseFromRow makes of the same row", () => {
  const cases: [string, LeaseRow][] = [
    ["every column set (evidence as SQLite's text)", full],
    ["evidence as PostgreSQL's parsed jsonb", { ...full, takeover_evidence: { basis: "x" } }],
    [
      "every nullable column null (a foreign, hand-made row)",
      {
        ...full,
        run_id: null,
        system: null,
        host: null,
        pid: null,
        pid_start: null,
        boot_id: null,
        child_pid: null,
        child_pid_start: null,
        command: null,
        note: null,
        ttl_ms: null,
        acquired_at: null,
        heartbeat_at: null,
        expires_at: null,
        takeover_evidence: null,
      },
    ],
  ];
  for (const [what, row] of cases)
    test(what, () => {
      const [object, array] = both(row);
      assert.deepEqual(leaseFromListRow(array), leaseFromRow(object));
    });

  test("the columns are exactly the ones leaseFromRow reads, bar `held`", () => {
    const read = Object.keys(full).filter((k) => k !== "held");
    assert.deepEqual([...LEASE_LIST_COLUMNS].sort(), read.sort());
  });
});
