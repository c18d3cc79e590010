import type { EventRecord } from "../domain/event.js";
import type { LeaseOwner, LeaseRecord, TakeoverRecord } from "../domain/lease.js";

/**
 * Both backends select leases and events under these column names, with times already as
 * epoch milliseconds, so one mapping serves both.
 */
export interface LeaseRow {
  scope: string;
  token: number;
  held: number | boolean;
  run_id: string | null;
  system: string | null;
  host: string | null;
  pid: number | null;
  pid_start: string | null;
  boot_id: string | null;
  child_pid: number | null;
  child_pid_start: string | null;
  command: string | null;
  note: string | null;
  ttl_ms: number | null;
  acquired_at: number | null;
  heartbeat_at: number | null;
  expires_at: number | null;
  prev_owner?: string | Record<string, unknown> | null;
  takeover_evidence?: string | Record<string, unknown> | null;
}

function json(v: string | Record<string, unknown> | null | undefined): unknown {
  if (v === null || v === undefined) return null;
  return typeof v === "string" ? JSON.parse(v) : v;
}

/** The owner columns, as both a lease row and a place in line (a grantable ticket) have them. */
export type OwnerColumns = Pick<
  LeaseRow,
  | "run_id"
  | "system"
  | "host"
  | "pid"
  | "pid_start"
  | "boot_id"
  | "child_pid"
  | "child_pid_start"
  | "command"
  | "note"
>;

export function ownerFromRow(row: OwnerColumns): LeaseOwner {
  return {
    runId: row.run_id ?? "",
    system: row.system ?? "quiesce",
    host: row.host ?? "",
    pid: row.pid,
    pidStart: row.pid_start,
    bootId: row.boot_id,
    childPid: row.child_pid,
    childPidStart: row.child_pid_start,
    command: row.command,
    note: row.note,
  };
}

/** A released scope has a row (it keeps the token counter) but no lease. */
export function leaseFromRow(row: LeaseRow | undefined | null): LeaseRecord | null {
  if (!row || !row.held) return null;
  return {
    scope: row.scope,
    token: Number(row.token),
    owner: ownerFromRow(row),
    ttlMs: Number(row.ttl_ms ?? 0),
    acquiredAt: Number(row.acquired_at ?? 0),
    heartbeatAt: Number(row.heartbeat_at ?? 0),
    // A foreign or hand-made row without an expiry never expires on its own; treat it as
    // live forever rather than as free (the check command flags such rows).
    expiresAt: row.expires_at === null ? Number.MAX_SAFE_INTEGER : Number(row.expires_at),
    takeover: (json(row.takeover_evidence) as TakeoverRecord | null) ?? null,
  };
}

/**
 * What a listing of held leases reads, in this order, on both backends: only the columns a
 * lease record has. Listings read rows as arrays (better-sqlite3's raw mode, node-postgres'
 * rowMode "array"): with 10,000 leases, building an object per row cost more than the query.
 */
export const LEASE_LIST_COLUMNS = [
  "scope",
  "token",
  "run_id",
  "system",
  "host",
  "pid",
  "pid_start",
  "boot_id",
  "child_pid",
  "child_pid_start",
  "command",
  "note",
  "ttl_ms",
  "acquired_at",
  "heartbeat_at",
  "expires_at",
  "takeover_evidence",
] as const;

/** A row of LEASE_LIST_COLUMNS, as the drivers return it. */
export type LeaseListRow = [
  scope: string,
  token: number,
  runId: string | null,
  system: string | null,
  host: string | null,
  pid: number | null,
  pidStart: string | null,
  bootId: string | null,
  childPid: number | null,
  childPidStart: string | null,
  command: string | null,
  note: string | null,
  ttlMs: number | null,
  acquiredAt: number | null,
  heartbeatAt: number | null,
  expiresAt: number | null,
  takeoverEvidence: string | Record<string, unknown> | null,
];

/** leaseFromRow for a listing's array row (a held lease), with the same defaults. */
export function leaseFromListRow(r: LeaseListRow): LeaseRecord {
  return {
    scope: r[0],
    token: Number(r[1]),
    owner: {
      runId: r[2] ?? "",
      system: r[3] ?? "quiesce",
      host: r[4] ?? "",
      pid: r[5],
      pidStart: r[6],
      bootId: r[7],
      childPid: r[8],
      childPidStart: r[9],
      command: r[10],
      note: r[11],
    },
    ttlMs: Number(r[12] ?? 0),
    acquiredAt: Number(r[13] ?? 0),
    heartbeatAt: Number(r[14] ?? 0),
    expiresAt: r[15] === null ? Number.MAX_SAFE_INTEGER : Number(r[15]),
    takeover: (json(r[16]) as TakeoverRecord | null) ?? null,
  };
}

export interface EventRow {
  id: number;
  at: number;
  kind: string;
  scope: string | null;
  token: number | null;
  run_id: string | null;
  host: string | null;
  pid: number | null;
  message: string;
  detail: string | Record<string, unknown>;
}

export function eventFromRow(row: EventRow): EventRecord {
  const detail: unknown = typeof row.detail === "string" ? JSON.parse(row.detail) : row.detail;
  return {
    id: Number(row.id),
    at: Number(row.at),
    kind: row.kind as EventRecord["kind"],
    scope: row.scope,
    token: row.token === null ? null : Number(row.token),
    runId: row.run_id,
    host: row.host,
    pid: row.pid,
    message: row.message,
    detail: (detail ?? {}) as Record<string, unknown>,
  };
}

/** Why releasing a stale lease by token was refused: it is live, moved on, or already free. */
export function staleRefusal(
  current: LeaseRecord | null,
  token: number,
): "live" | "token_mismatch" | "not_held" {
  if (current === null) return "not_held";
  return current.token === token ? "live" : "token_mismatch";
}
