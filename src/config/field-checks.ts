import { parseDuration } from "../domain/duration.js";
import { isQuiesceError } from "../domain/errors.js";
import { validateSystem } from "../domain/names.js";
import { resolveStore } from "../store/open-store.js";

/**
 * Checks for one config value each. They throw a FieldProblem whose message is the predicate
 * of a sentence ("is empty", `"5x" is not a duration ...`); the caller puts the subject in
 * front: `quiesce.yaml: alerts.webhook.timeout: ...` for the file, `--probe-timeout: ...` for a
 * flag, so every source of a value reports it the same way.
 */
export class FieldProblem extends Error {
  override name = "FieldProblem";
}

/** How a YAML value reads in a message: `"5x"`, `the number 5`, `a list`, `no value`. */
export function describeValue(v: unknown): string {
  if (v === null || v === undefined) return "no value";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean") return `the ${typeof v} ${String(v)}`;
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a mapping";
  return typeof v;
}

/**
 * Runs a domain validator that prefixes its message with `what: ` and keeps only the predicate,
 * so the domain's wording (and its tests) stays the single source of these sentences.
 */
function predicateOf<T>(check: (what: string) => T): T {
  const SUBJECT = "\u0000";
  try {
    return check(SUBJECT);
  } catch (e) {
    if (!isQuiesceError(e)) throw e;
    const prefix = `${SUBJECT}: `;
    throw new FieldProblem(
      e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message,
    );
  }
}

export function checkText(v: unknown): string {
  if (v === undefined) throw new FieldProblem("is missing");
  if (v === null) throw new FieldProblem("has no value");
  if (typeof v !== "string") throw new FieldProblem(`expected text, got ${describeValue(v)}`);
  if (v.trim() === "") throw new FieldProblem("is empty");
  return v;
}

export interface DurationRule {
  /** Zero is meaningless for a timeout or a limit, fine for a grace period. */
  allowZero: boolean;
}

/** YAML turns `timeout: 5` into a number: it is read as "5" so the "no unit" hint applies. */
export function checkDuration(v: unknown, rule: DurationRule): number {
  if (v === null || v === undefined) throw new FieldProblem("has no value");
  if (typeof v !== "string" && typeof v !== "number") {
    throw new FieldProblem(`expected a duration such as 90s, got ${describeValue(v)}`);
  }
  const text = String(v);
  const ms = predicateOf((what) => parseDuration(text, what));
  if (ms === 0 && !rule.allowZero) throw new FieldProblem(`"${text}" must be longer than zero`);
  return ms;
}

/** A grace period: a duration, or `never` (null: the policy never presumes death by silence). */
export function checkGrace(v: unknown): number | null {
  if (v === "never") return null;
  try {
    return checkDuration(v, { allowZero: true });
  } catch (e) {
    if (!(e instanceof FieldProblem)) throw e;
    throw new FieldProblem(e.message.replace("; use e.g. ", "; use never or e.g. "));
  }
}

export function checkHttpUrl(v: unknown): string {
  const text = checkText(v);
  let url: URL | null = null;
  try {
    url = new URL(text);
  } catch {
    url = null;
  }
  if (url === null || (url.protocol !== "http:" && url.protocol !== "https:") || !url.hostname) {
    throw new FieldProblem(`${JSON.stringify(text)} is not an http:// or https:// URL`);
  }
  return text;
}

export function checkIntRange(v: unknown, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    throw new FieldProblem(
      `expected a whole number from ${min} to ${max}, got ${describeValue(v)}`,
    );
  }
  return v;
}

export function checkSystem(v: unknown): string {
  const text = checkText(v);
  return predicateOf((what) => validateSystem(text, what));
}

/** Same syntax as --store; checked now so a bad file fails before anything is opened. */
export function checkStore(v: unknown): string {
  const text = checkText(v);
  try {
    resolveStore(text, {});
  } catch (e) {
    // resolveStore names its own source (--store); the caller puts the real one in front.
    if (isQuiesceError(e)) throw new FieldProblem(e.message.replace(/^--store: /, ""));
    throw e;
  }
  return text;
}
