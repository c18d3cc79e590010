import { failsAudit } from "../../domain/legacy-lock.js";
import type { CheckFinding } from "../check.js";
import { runAudit, type AuditAccept } from "./audit.js";

/**
 * `check --audit PATH...` (or `audit.paths` in quiesce.yaml): the legacy locks under these
 * paths that are stale or unknown and not accepted, as WARNING findings of the check. A check
 * collects them like any other source; nothing is written.
 */
export async function legacyLockFindings(o: {
  paths: readonly string[];
  accept?: readonly AuditAccept[];
}): Promise<CheckFinding[]> {
  if (o.paths.length === 0) return [];
  const r = await runAudit({ paths: o.paths, accept: o.accept ?? [] });
  return r.locks
    .filter((l) => failsAudit(l.verdict, l.accepted))
    .map((l) => ({
      severity: "warning",
      code: "legacy_lock",
      scope: l.path,
      message: `legacy ${l.kind} ${l.path} is ${l.verdict}: ${l.evidence}; replace it with a lease or document it under audit.accept (quiesce audit ${l.path})`,
    }));
}
