import { lstatSync, readdirSync, realpathSync, type Stats } from "node:fs";
import { basename, join, relative, isAbsolute } from "node:path";
import { lockKindOf, type LockKind } from "../../domain/legacy-lock.js";
import type { IdiomFileKind } from "../../domain/lock-idioms.js";
import { readPrefix, unreadable } from "./read-prefix.js";

/** A root to audit: `path` as reported, `real` its resolved location, `depth` levels below. */
export interface AuditRoot {
  path: string;
  real: string;
  depth: number;
}

export interface AuditNote {
  path: string;
  note: string;
}

export type Found =
  | { type: "lock"; path: string; real: string; kind: LockKind; stat: Stats }
  | { type: "idiom"; path: string; real: string; fileKind: IdiomFileKind };

/** A walk never visits more entries than this (a runaway /run or a huge tree). */
export const MAX_ENTRIES = 200_000;

const UNIT = /\.(service|socket|timer|path|mount)$/;
const SCRIPT = /\.(sh|bash)$/;

/**
 * Walks the roots without ever following a symlink: a lock-like link is noted when it points
 * out of its root, and a directory is entered only as itself. Lock-like directories are
 * reported, not entered. What cannot be read is a note, never an error.
 */
export class Walker {
  readonly found: Found[] = [];
  readonly notes: AuditNote[] = [];
  private readonly seen = new Set<string>();
  private entries = 0;

  walk(root: AuditRoot): void {
    let st: Stats;
    try {
      st = lstatSync(root.real);
    } catch (e) {
      this.note(root.path, unreadable(e));
      return;
    }
    if (st.isDirectory()) this.directory(root.path, root.real, root, root.depth);
    else this.entry(root.path, root.real, basename(root.real), st);
  }

  private directory(path: string, real: string, root: AuditRoot, depth: number): void {
    if (this.seen.has(real)) return;
    this.seen.add(real);
    let names: string[];
    try {
      names = readdirSync(real).sort();
    } catch (e) {
      this.note(path, unreadable(e));
      return;
    }
    for (const name of names) {
      if (++this.entries > MAX_ENTRIES) {
        if (this.entries === MAX_ENTRIES + 1)
          this.note(path, `stopped after ${MAX_ENTRIES} entries; audit a narrower path`);
        return;
      }
      const p = join(path, name);
      const r = join(real, name);
      let st: Stats;
      try {
        st = lstatSync(r);
      } catch (e) {
        this.note(p, unreadable(e));
        continue;
      }
      if (st.isSymbolicLink()) {
        this.symlink(p, r, name, root);
      } else if (st.isDirectory() && lockKindOf(name, true) === null) {
        if (depth > 0) this.directory(p, r, root, depth - 1);
      } else {
        this.entry(p, r, name, st);
      }
    }
  }

  private entry(path: string, real: string, name: string, st: Stats): void {
    if (this.seen.has(`f:${real}`)) return;
    this.seen.add(`f:${real}`);
    const kind = lockKindOf(name, st.isDirectory());
    if (kind !== null && (st.isDirectory() || st.isFile())) {
      this.found.push({ type: "lock", path, real, kind, stat: st });
      return;
    }
    if (!st.isFile()) return;
    const fileKind = this.idiomKind(path, real, name, st);
    if (fileKind !== null) this.found.push({ type: "idiom", path, real, fileKind });
  }

  private idiomKind(path: string, real: string, name: string, st: Stats): IdiomFileKind | null {
    const parent = basename(join(real, ".."));
    if (parent === "crontabs") return "user-crontab";
    if (parent === "cron.d" || name === "crontab") return "crontab";
    if (UNIT.test(name)) return "unit";
    if (SCRIPT.test(name)) return "script";
    if ((st.mode & 0o111) === 0 || st.size === 0) return null;
    try {
      return readPrefix(real, 2) === "#!" ? "script" : null;
    } catch (e) {
      // An executable we cannot read may be a script: say so rather than pass over it.
      this.note(path, unreadable(e));
      return null;
    }
  }

  /** Only lock-like or script-like links are worth a note; every other link is passed over. */
  private symlink(path: string, real: string, name: string, root: AuditRoot): void {
    if (lockKindOf(name, false) === null && !UNIT.test(name) && !SCRIPT.test(name)) return;
    let target: string;
    try {
      target = realpathSync(real);
    } catch {
      this.note(path, "a dangling symlink; not followed");
      return;
    }
    const rel = relative(root.real, target);
    if (rel.startsWith("..") || isAbsolute(rel))
      this.note(path, `a symlink to ${target}, out of the audited root; not followed`);
  }

  private note(path: string, note: string): void {
    this.notes.push({ path, note });
  }
}
