import { formatDuration } from "../../domain/duration.js";
import type { AuditReport } from "./audit.js";

type Table = (headers: readonly string[], rows: readonly (readonly string[])[]) => string;

/** What `quiesce audit --json` prints: the report without its summary fields. */
export function auditJson(r: AuditReport) {
  return { locks: r.locks, idioms: r.idioms, notes: r.notes };
}

/**
 * One table per section (locks, idioms), then the notes and a summary line. `table` is the
 * CLI's column formatter, passed in so this module stays free of the CLI.
 */
export function auditText(r: AuditReport, table: Table): string {
  const out: string[] = [];
  out.push(`Lock files, pid files, flags and lock directories (${r.locks.length}):`);
  if (r.locks.length === 0) out.push("  none found\n");
  else
    out.push(
      table(
        ["VERDICT", "KIND", "AGE", "SIZE", "UID", "PID", "PATH", "EVIDENCE"],
        r.locks.map((l) => [
          l.accepted ? `${l.verdict} (accepted)` : l.verdict,
          l.kind,
          formatDuration(l.ageMs),
          String(l.size),
          String(l.uid),
          l.pid === null ? "-" : String(l.pid),
          l.path,
          l.accepted ? `${l.evidence}; accepted: ${l.reason ?? ""}` : l.evidence,
        ]),
      ),
    );
  out.push(`Lock idioms in scripts, crontabs and units (${r.idioms.length}):`);
  if (r.idioms.length === 0) out.push("  none found\n");
  else
    out.push(
      table(
        ["FILE:LINE", "IDIOM", "REPLACE WITH"],
        r.idioms.map((i) => [`${i.file}:${i.line}`, i.idiom, i.suggestion]),
      ),
    );
  if (r.notes.length > 0) {
    out.push(`Skipped (${r.notes.length}):`);
    for (const n of r.notes) out.push(`  ${n.path}: ${n.note}`);
    out.push("");
  }
  const accepted = r.locks.filter((l) => l.accepted).length;
  out.push(
    r.failing === 0
      ? `audit OK: every lock is live or accepted (${r.locks.length} lock(s), ${accepted} accepted, ${r.idioms.length} idiom(s)); roots: ${r.roots.join(" ")}`
      : `audit FAILED: ${r.failing} lock(s) stale or unknown and not accepted (document them under audit.accept in quiesce.yaml, or remove them); roots: ${r.roots.join(" ")}`,
  );
  return out.join("\n") + "\n";
}
