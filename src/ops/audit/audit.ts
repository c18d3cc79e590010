import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { invalidInput } from "../../domain/errors.js";
import { failsAudit, type LockKind, type Verdict } from "../../domain/legacy-lock.js";
import { findIdioms, type Idiom } from "../../domain/lock-idioms.js";
import { inspectLock } from "./inspect-lock.js";
import { ProcFacts } from "./process-facts.js";
import { SCRIPT_PREFIX_BYTES, readPrefix, unreadable } from "./read-prefix.js";
import { Walker, type AuditNote, type AuditRoot } from "./walk.js";

/** Where legacy locks live on a typical host; /tmp is read at its top level only. */
export const DEFAULT_AUDIT_ROOTS: readonly { path: string; depth: number }[] = [
  { path: "/run", depth: 4 },
  { path: "/var/run", depth: 4 },
  { path: "/var/lock", depth: 4 },
  { path: "/run/lock", depth: 4 },
  { path: "/tmp", depth: 0 },
  { path: "/etc/cron.d", depth: 4 },
  { path: "/etc/systemd/system", depth: 4 },
];
/** How deep a named path is walked. */
export const AUDIT_DEPTH = 8;

/** `audit.accept` in quiesce.yaml: a known lock, documented; it does not fail the audit. */
export interface AuditAccept {
  path: string;
  reason: string;
}

export interface AuditOptions {
  /** What to audit. None: the default roots plus `configPaths`. */
  paths?: readonly string[];
  /** `audit.paths` from quiesce.yaml, audited with the default roots. */
  configPaths?: readonly string[];
  accept?: readonly AuditAccept[];
  /** Epoch ms; default now. */
  now?: number;
  /** Where procfs is mounted (tests). */
  proc?: string;
}

export interface AuditLock {
  path: string;
  kind: LockKind;
  verdict: Verdict;
  evidence: string;
  pid: number | null;
  ageMs: number;
  accepted: boolean;
  /** The reason `audit.accept` gives, when accepted. */
  reason: string | null;
  modifiedAt: string;
  size: number;
  uid: number;
}

export interface AuditIdiom {
  file: string;
  line: number;
  idiom: Idiom;
  suggestion: string;
}

export interface AuditReport {
  roots: string[];
  locks: AuditLock[];
  idioms: AuditIdiom[];
  /** What was skipped and why (unreadable, a symlink out of its root). */
  notes: AuditNote[];
  /** Stale or unknown locks that are not accepted. */
  failing: number;
  /** 0: every lock is live or accepted; 1: some are not. */
  exitCode: 0 | 1;
}

/**
 * `quiesce audit`: the inventory of lock files, pid files, maintenance flags and lock
 * directories (each judged live, stale or unknown, with its evidence), and of the lock idioms
 * in scripts, crontabs and units (each with the `quiesce run --lease` line that replaces it).
 * Reads only a small prefix of any file, never follows a symlink, and notes what it cannot
 * read instead of failing. A named path that does not exist is bad input (INVALID_INPUT).
 */
export function runAudit(o: AuditOptions = {}): Promise<AuditReport> {
  const now = o.now ?? Date.now();
  const roots = auditRoots(o);
  const walker = new Walker();
  for (const r of roots) walker.walk(r);
  const proc = new ProcFacts(o.proc);
  const accept = new Map((o.accept ?? []).map((a) => [resolve(a.path), a.reason]));
  const locks: AuditLock[] = [];
  const idioms: AuditIdiom[] = [];
  const notes = [...walker.notes];
  for (const f of walker.found) {
    try {
      if (f.type === "idiom") {
        const text = readPrefix(f.real, SCRIPT_PREFIX_BYTES);
        for (const i of findIdioms(text, f.path, f.fileKind))
          idioms.push({ file: f.path, line: i.line, idiom: i.idiom, suggestion: i.suggestion });
        continue;
      }
      const j = inspectLock(f, proc, now);
      const reason = accept.get(f.path) ?? accept.get(f.real) ?? null;
      locks.push({
        path: f.path,
        kind: f.kind,
        verdict: j.verdict,
        evidence: j.evidence,
        pid: j.pid,
        ageMs: Math.max(0, Math.round(now - f.stat.mtimeMs)),
        accepted: reason !== null,
        reason,
        modifiedAt: new Date(f.stat.mtimeMs).toISOString(),
        size: f.stat.size,
        uid: f.stat.uid,
      });
    } catch (e) {
      notes.push({ path: f.path, note: unreadable(e) });
    }
  }
  const failing = locks.filter((l) => failsAudit(l.verdict, l.accepted)).length;
  return Promise.resolve({
    roots: roots.map((r) => r.path),
    locks,
    idioms,
    notes,
    failing,
    exitCode: failing > 0 ? 1 : 0,
  });
}

function auditRoots(o: AuditOptions): AuditRoot[] {
  const named = o.paths ?? [];
  if (named.length > 0) return named.map((p) => namedRoot(p, "audit"));
  const out: AuditRoot[] = [];
  for (const d of DEFAULT_AUDIT_ROOTS) {
    let real: string;
    try {
      real = realpathSync(d.path);
    } catch {
      continue; // a default root this host does not have
    }
    // /var/run is /run on most hosts: one walk, reported under its real name.
    if (!out.some((r) => r.real === real)) out.push({ path: real, real, depth: d.depth });
  }
  for (const p of o.configPaths ?? []) out.push(namedRoot(p, "audit.paths"));
  return out;
}

/** A root the user named: it must exist (a typo is not an empty, clean audit). */
function namedRoot(p: string, what: string): AuditRoot {
  if (p.trim() === "") throw invalidInput(`${what}: a path is empty`);
  const path = resolve(p);
  let real: string;
  try {
    real = realpathSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw invalidInput(`${what}: ${p} does not exist`);
    throw invalidInput(`${what}: ${p} ${unreadable(e).replace(/; skipped$/, "")}`);
  }
  return { path, real, depth: AUDIT_DEPTH };
}
