import { formatDuration } from "../domain/duration.js";
import { EventKind, type EventRecord } from "../domain/event.js";
import {
  describeBlockingLease,
  describeOwner,
  type LeaseOwner,
  type LeaseRecord,
} from "../domain/lease.js";
import type { Store } from "../store/store.js";

export interface IncidentInput {
  /** A scope, or a run id (`r-...`). */
  subject: string;
  lease: LeaseRecord | null;
  now: number;
  events: readonly EventRecord[];
  location: string;
}

const iso = (ms: number) => new Date(ms).toISOString();
const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");

/** Gathers what the incident record needs: the events of a scope (or a run) and its lease now. */
export async function gatherIncident(store: Store, subject: string): Promise<IncidentInput> {
  const byRun = /^r-[0-9a-f-]{36}$/.test(subject);
  const events = await store.events.list(
    byRun ? { runId: subject, limit: 100_000 } : { scope: subject, limit: 100_000 },
  );
  const { lease, now } = byRun
    ? { lease: null, now: await store.now() }
    : await store.leases.getLease(subject);
  return { subject, lease, now, events, location: store.location };
}

/**
 * The timeline of a scope as a markdown incident record: who held it, when it went stale, the
 * evidence, who took it over or broke it, and why. Written for a human reading a post-mortem.
 */
export function renderIncident(i: IncidentInput): string {
  const out: string[] = [];
  out.push(`# Incident record: ${i.subject}`, "");
  out.push(`Generated ${iso(i.now)} from ${i.location}. Times are the store's clock, UTC.`, "");
  out.push("## Now", "");
  out.push(
    i.lease
      ? describeBlockingLease(i.lease, i.now, { takeoverTried: true }) + "."
      : "No lease is held.",
    "",
  );

  out.push("## Timeline", "");
  if (i.events.length === 0) out.push("No events recorded.", "");
  else {
    out.push("| time | event | token | by | what happened |", "|---|---|---|---|---|");
    for (const e of i.events) {
      const by = [e.host, e.pid === null ? null : `pid ${e.pid}`].filter(Boolean).join(" ");
      out.push(
        `| ${iso(e.at)} | ${e.kind} | ${e.token ?? ""} | ${cell(by)} | ${cell(e.message)} |`,
      );
    }
    out.push("");
  }

  const stale = i.events.filter((e) => e.kind === EventKind.LeaseExpired);
  if (stale.length > 0) {
    out.push("## When it went stale", "");
    for (const e of stale) out.push(`- token ${e.token}: ${e.message} (noticed ${iso(e.at)})`);
    out.push("");
  }
  for (const e of i.events.filter((x) => x.kind === EventKind.LeaseTakenOver))
    out.push(...takeoverSection(e));
  for (const e of i.events.filter((x) => x.kind === EventKind.LeaseBroken))
    out.push(...breakSection(e));
  const refused = i.events.filter((e) => e.kind === EventKind.LeaseTakeoverRefused);
  if (refused.length > 0) {
    out.push("## Refused takeovers", "");
    for (const e of refused)
      out.push(`- ${iso(e.at)}, token ${e.token}, asked from ${e.host ?? "?"}: ${e.message}`);
    out.push("");
  }
  return out.join("\n");
}

interface Probe {
  probe: string;
  verdict: string;
  evidence: string;
}

function evidence(probes: unknown): string[] {
  if (!Array.isArray(probes)) return [];
  return (probes as Probe[]).map((p) => `  - ${p.probe} (${p.verdict}): ${p.evidence}`);
}

function ownerLine(o: LeaseOwner | undefined): string {
  return o ? describeOwner(o) : "unknown";
}

function takeoverSection(e: EventRecord): string[] {
  const d = e.detail as {
    previous?: { token: number; owner: LeaseOwner; heartbeatAt: number; expiresAt: number };
    basis?: string;
    summary?: string;
    probes?: unknown;
  };
  const p = d.previous;
  return [
    `## Taken over: token ${p?.token ?? "?"} -> ${e.token} at ${iso(e.at)}`,
    "",
    `- previous owner: ${ownerLine(p?.owner)}`,
    p
      ? `- last heartbeat ${iso(p.heartbeatAt)}, expired ${iso(p.expiresAt)} (${formatDuration(e.at - p.expiresAt)} before the takeover)`
      : "- previous times: unknown",
    `- taken by: ${e.runId ?? "?"} on ${e.host ?? "?"}${e.pid === null ? "" : ` pid ${e.pid}`}`,
    `- basis: ${d.basis ?? "?"}: ${d.summary ?? ""}`,
    "- evidence:",
    ...evidence(d.probes),
    "",
  ];
}

function breakSection(e: EventRecord): string[] {
  const d = e.detail as {
    operator?: string;
    reason?: string;
    forced?: boolean;
    foreign?: boolean;
    lease?: LeaseRecord;
    decision?: { summary?: string; probes?: unknown };
    state?: unknown[];
  };
  return [
    `## Broken by ${d.operator ?? "?"} at ${iso(e.at)} (token ${e.token})`,
    "",
    `- reason: ${d.reason ?? "?"}`,
    `- owner: ${ownerLine(d.lease?.owner)}`,
    `- forced past unknown: ${d.forced ? "yes" : "no"}; another system's lease: ${d.foreign ? "yes" : "no"}`,
    `- checks: ${d.decision?.summary ?? "?"}`,
    "- evidence:",
    ...evidence(d.decision?.probes),
    "- the lease as it was:",
    "",
    "```json",
    JSON.stringify({ lease: d.lease, state: d.state }, null, 2),
    "```",
    "",
  ];
}
