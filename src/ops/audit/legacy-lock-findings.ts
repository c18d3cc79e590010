import { failsAudit } from "../../domain/legacy-lock.js";
import type { CheckCollector } from "../check.js";
import { runAudit, type AuditAccept } from "./audit.js";

/**
 * `check --audit PATH...` (or `audit.paths` in quiesce.yaml): the legacy locks under these
 * paths that are stale or unknown and not accepted, as WARNING findings of the check: one
 * more source beside the store's. Nothing is written.
 */
export function legacyLockCollector(o: {
  paths: readonly string[];
  accept?: readonly AuditAccept[];
}): CheckCollector {
  return {
    name: "legacy-locks",
    async collect() {
      if (o.paths.length === 0) return { findings: [], metrics: [] };
      const r = await runAudit({ paths: o.paths, accept: o.accept ?? [] });
      const failing = r.locks.filter((l) => failsAudit(l.verdict, l.accepted));
      return {
        findings: failing.map((l) => ({
          severity: "warning" as const,
          code: "legacy_lock",
          subject: l.path,
          message: `legacy ${l.kind} ${l.path} is ${l.verdict}: ${l.evidence}; replace it with a lease or document it under audit.accept (quiesce audit ${l.path})`,
        })),
        metrics: [
          {
            perf: "legacy_locks",
            prom: "quiesce_check_legacy_locks",
            help: "Legacy lock files that are stale or unknown and not accepted (check --audit).",
            value: failing.length,
          },
        ],
      };
    },
  };
}
