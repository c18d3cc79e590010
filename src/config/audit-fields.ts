import { checkText, describeValue, FieldProblem } from "./field-checks.js";

/**
 * The `audit:` section's fields: `paths` (a list of paths audited with the default roots) and
 * `accept` (a list of `{ path, reason }`: legacy locks someone documented). Each check throws a
 * FieldProblem whose message is the predicate, as every field check does.
 */
export function checkPathList(v: unknown): string[] {
  if (!Array.isArray(v))
    throw new FieldProblem(`expected a list of paths, got ${describeValue(v)}`);
  return v.map((p, i) => absolutePath(p, `item ${i + 1}`));
}

export interface AcceptEntry {
  path: string;
  reason: string;
}

export function checkAcceptList(v: unknown): AcceptEntry[] {
  if (!Array.isArray(v))
    throw new FieldProblem(`expected a list of { path, reason } entries, got ${describeValue(v)}`);
  return v.map((e, i) => {
    const item = `item ${i + 1}`;
    if (e === null || typeof e !== "object" || Array.isArray(e))
      throw new FieldProblem(
        `${item}: expected a mapping with path and reason, got ${describeValue(e)}`,
      );
    const entry = e as Record<string, unknown>;
    const extra = Object.keys(entry).find((k) => k !== "path" && k !== "reason");
    if (extra !== undefined)
      throw new FieldProblem(`${item}: unknown setting ${extra}; an entry accepts path, reason`);
    const path = absolutePath(entry.path, `${item}: path`);
    return { path, reason: within(`${item}: reason`, () => checkText(entry.reason)) };
  });
}

function absolutePath(v: unknown, what: string): string {
  const text = within(what, () => checkText(v));
  if (!text.startsWith("/")) throw new FieldProblem(`${what}: "${text}" is not an absolute path`);
  return text;
}

/** Puts `what` in front of a nested check's predicate. */
function within<T>(what: string, check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (e instanceof FieldProblem) throw new FieldProblem(`${what}: ${e.message}`);
    throw e;
  }
}
