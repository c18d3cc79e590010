import { formatDuration } from "../domain/duration.js";
import type { EventRecord } from "../domain/event.js";
import { leaseStatus, type LeaseRecord } from "../domain/lease.js";
import { iso } from "../lease/lease-json.js";

// Shared with the HTTP API (src/server), which returns the same shapes.
export { iso, leaseJson } from "../lease/lease-json.js";

export function printJson(value: unknown): void {
  process.stdout.write(jsonText(value, 2) + "\n");
}

/** A time field: `at`, `now`, `storeNow`, `...At` (epoch ms inside the library). */
const TIME_KEY = /^(at|now)$|(At|Now)$/;

/**
 * JSON as every `--json` prints it: times as ISO 8601 strings wherever they are, also inside
 * event details and nested records (the library and the store keep epoch ms); durations are
 * numbers named `...Ms`.
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(
    value,
    (key, v: unknown) =>
      typeof v === "number" && TIME_KEY.test(key) && Number.isFinite(v) && v > 0 && v < 8.64e15
        ? new Date(v).toISOString()
        : v,
    indent,
  );
}

/** Aligned columns; the last column is left ragged. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n") + "\n";
}

export function ownerCell(l: LeaseRecord): string {
  const o = l.owner;
  let s = o.host;
  if (o.pid !== null) s += ` pid ${o.pid}`;
  if (o.childPid !== null) s += ` (cmd ${o.childPid})`;
  return s;
}

export function leaseTable(leases: readonly LeaseRecord[], now: number): string {
  return table(
    ["SCOPE", "TOKEN", "SYSTEM", "OWNER", "RUN", "HEARTBEAT", "EXPIRES", "STATE"],
    leases.map((l) => {
      const s = leaseStatus(l, now);
      return [
        l.scope,
        String(l.token),
        l.owner.system,
        ownerCell(l),
        l.owner.runId,
        `${formatDuration(s.heartbeatAgeMs)} ago`,
        s.expired ? `${formatDuration(-s.expiresInMs)} ago` : `in ${formatDuration(s.expiresInMs)}`,
        s.expired ? "EXPIRED" : "live",
      ];
    }),
  );
}

export function leaseDetails(l: LeaseRecord, now: number): string {
  const s = leaseStatus(l, now);
  const o = l.owner;
  const rows: [string, string][] = [
    ["scope", l.scope],
    ["state", s.expired ? `EXPIRED ${formatDuration(-s.expiresInMs)} ago, never released` : "live"],
    ["token", String(l.token)],
    ["system", o.system],
    ["run id", o.runId],
    ["host", o.host],
    [
      "pid",
      o.pid === null ? "-" : `${o.pid}${o.pidStart ? ` (started at tick ${o.pidStart})` : ""}`,
    ],
    ["command pid", o.childPid === null ? "-" : String(o.childPid)],
    ["command", o.command ?? "-"],
    ["boot id", o.bootId ?? "-"],
    ["note", o.note ?? "-"],
    ["acquired", `${iso(l.acquiredAt)} (${formatDuration(s.heldForMs)} ago)`],
    ["last heartbeat", `${iso(l.heartbeatAt)} (${formatDuration(s.heartbeatAgeMs)} ago)`],
    [
      "expires",
      `${iso(l.expiresAt)} (${s.expired ? `${formatDuration(-s.expiresInMs)} ago` : `in ${formatDuration(s.expiresInMs)}`})`,
    ],
    ["ttl", formatDuration(l.ttlMs)],
  ];
  if (l.takeover) {
    const p = l.takeover.previous;
    rows.push([
      "taken over from",
      `token ${p.token} of run ${p.owner.runId} on ${p.owner.host}: ${l.takeover.summary}`,
    ]);
  }

  const w = Math.max(...rows.map((r) => r[0].length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join("\n") + "\n";
}

export function eventLine(e: EventRecord): string {
  const who = [e.host, e.pid === null ? null : `pid ${e.pid}`].filter(Boolean).join(" ");
  return [
    iso(e.at),
    e.kind.padEnd(26),
    e.scope ?? "-",
    e.token === null ? "" : `#${e.token}`,
    who,
    e.message,
  ]
    .filter((x) => x !== "")
    .join("  ");
}
