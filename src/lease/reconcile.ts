import { invalidInput } from "../domain/errors.js";
import type { LeaseOwner } from "../domain/lease.js";
import type { Leases } from "./leases.js";
import type { TakeoverAttempt } from "./takeover.js";

export interface ReconcileOptions {
  /** Only scopes starting with this (e.g. `host:`), or these exact scopes. */
  prefix?: string;
  scopes?: readonly string[];
  /** Who takes a lease over; it is released again right away unless `hold`. */
  owner: LeaseOwner;
  dryRun?: boolean;
}

export interface ReconcileEntry {
  scope: string;
  token: number;
  attempt: TakeoverAttempt;
  /** After a takeover: released again so the scope is free for whoever needs it. */
  cleared: boolean;
}

/**
 * Startup reconciliation: before concluding that work is blocked, sweep the scopes an agent
 * needs for expired leases and run the takeover procedure on each. Leases whose owners are
 * shown dead are taken over and released again (the scope is free, the record stays in the
 * log); the rest are reported with the reason they stay.
 */
export async function reconcileExpired(
  leases: Leases,
  o: ReconcileOptions,
): Promise<ReconcileEntry[]> {
  if (o.prefix === undefined && o.scopes === undefined)
    throw invalidInput("reconcile: name the scopes or a prefix");
  const { leases: all, now } = await leases.list();
  const wanted = all.filter(
    (l) =>
      l.expiresAt <= now &&
      (o.scopes ? o.scopes.includes(l.scope) : true) &&
      (o.prefix !== undefined ? l.scope.startsWith(o.prefix) : true),
  );
  const procedure = leases.takeoverProcedure();
  const out: ReconcileEntry[] = [];
  for (const l of wanted) {
    const attempt = await procedure.attempt({
      scope: l.scope,
      owner: o.owner,
      ttlMs: 60_000,
      ticket: null,
      dryRun: o.dryRun,
    });
    let cleared = false;
    if (attempt.outcome === "taken") {
      const r = await leases.store.leases.release({
        scope: l.scope,
        token: attempt.lease.token,
        runId: o.owner.runId,
        host: o.owner.host,
        pid: o.owner.pid,
        reason: "cleared by startup reconciliation after a takeover",
      });
      cleared = r.ok;
    }
    out.push({ scope: l.scope, token: l.token, attempt, cleared });
  }
  return out;
}
