import { userInfo } from "node:os";
import { EventKind } from "../domain/event.js";
import { invalidInput } from "../domain/errors.js";
import type { LeaseRecord } from "../domain/lease.js";
import { validateScope } from "../domain/names.js";
import type { TakeoverDecision } from "../domain/takeover-policy.js";
import { crashPoint } from "../fault/crash-points.js";
import type { Leases } from "./leases.js";
import { hostIdentity } from "../process/process-identity.js";

export interface BreakOptions {
  reason: string;
  /** Who is breaking it; default the login name (the sudo user when run through sudo). */
  operator?: string;
  /** Go ahead when death is unknown (never when a probe says alive). Recorded. */
  force?: boolean;
  /** Break another system's lease, knowingly. Recorded. */
  foreign?: boolean;
  /** Explain, change nothing. */
  dryRun?: boolean;
}

export type BreakResult =
  | { outcome: "free" }
  | { outcome: "refused"; lease: LeaseRecord; decision: TakeoverDecision }
  | { outcome: "would_break"; lease: LeaseRecord; decision: TakeoverDecision }
  | { outcome: "broken"; lease: LeaseRecord; decision: TakeoverDecision; incidentId: string }
  | { outcome: "changed"; lease: LeaseRecord; current: LeaseRecord | null };

export function defaultOperator(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SUDO_USER) return env.SUDO_USER;
  try {
    return userInfo().username;
  } catch {
    return env.USER ?? "unknown";
  }
}

/**
 * `quiesce lock break`: the documented replacement for deleting a lock file by hand. The same
 * no-owner checks as a takeover run first; then the lease's full contents, the operator and the
 * reason are written as an incident event, and only after that commit is the lease released.
 * A crash between the two leaves the incident recorded and the lease still held, never the
 * reverse.
 */
export async function breakLease(
  leases: Leases,
  scope: string,
  o: BreakOptions,
): Promise<BreakResult> {
  validateScope(scope, "scope");
  if (o.reason.trim() === "") throw invalidInput("--reason: say why the lease is being broken");
  const operator = o.operator ?? defaultOperator();
  const id = hostIdentity();
  const procedure = leases.takeoverProcedure({
    forceUnknown: o.force ?? false,
    allowForeign: o.foreign ?? false,
  });
  const me = {
    runId: `break-${operator}`,
    system: "quiesce",
    host: id.host,
    pid: process.pid,
  } as const;
  const look = await procedure.attempt({
    scope,
    owner: {
      ...me,
      pidStart: null,
      bootId: id.bootId,
      childPid: null,
      childPidStart: null,
      command: null,
      note: null,
    },
    ttlMs: 1,
    ticket: null,
    dryRun: true,
  });
  if (look.outcome === "free") return { outcome: "free" };
  if (look.outcome !== "would_take_over" && look.outcome !== "refused")
    throw new Error("unexpected dry-run outcome");
  const { stale: lease, decision } = look;
  if (decision.action === "refuse") {
    await leases.store.events
      .record({
        kind: EventKind.LeaseTakeoverRefused,
        scope,
        token: lease.token,
        runId: null,
        host: id.host,
        pid: process.pid,
        message: `break by ${operator} refused (${decision.reason.replace("_", " ")}): ${decision.summary}`,
        detail: { action: "break", operator, reason: o.reason, decision },
      })
      .catch(() => undefined);
    return { outcome: "refused", lease, decision };
  }
  if (o.dryRun) return { outcome: "would_break", lease, decision };

  const state = await leases.store.leases.getState(scope);
  const host = /^host:(.+)$/.exec(scope)?.[1] ?? null;
  const incident = {
    operator,
    reason: o.reason,
    forced: decision.basis === "forced_unknown",
    foreign: lease.owner.system !== "quiesce",
    decision,
    lease,
    state,
    host,
    brokenFrom: { host: id.host, pid: process.pid },
  };
  await leases.store.events.record({
    kind: EventKind.LeaseBroken,
    scope,
    token: lease.token,
    runId: lease.owner.runId,
    host: id.host,
    pid: process.pid,
    message: `broken by ${operator}: ${o.reason} (${decision.summary})`,
    detail: incident,
  });
  crashPoint("break.after-incident");
  const r = await leases.store.leases.releaseStale({
    scope,
    token: lease.token,
    runId: null,
    host: id.host,
    pid: process.pid,
    reason: `broken by ${operator}: ${o.reason}`,
  });
  if (!r.ok) return { outcome: "changed", lease, current: r.current };
  leases.alerter?.emit({
    kind: EventKind.LeaseBroken,
    severity: "warning",
    scope,
    token: lease.token,
    summary: `${scope}: lease of run ${lease.owner.runId} on ${lease.owner.host} broken by ${operator}: ${o.reason}`,
    at: new Date().toISOString(),
    reporter: id.host,
    detail: incident,
  });
  return { outcome: "broken", lease, decision, incidentId: `${scope}#${lease.token}` };
}
