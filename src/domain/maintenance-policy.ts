import { formatDuration, parseDuration, toMs } from "./duration.js";
import { invalidInput } from "./errors.js";

/**
 * What a runtime does when a maintenance window asks it to drain. From a config file or the
 * API (snake_case keys, as users write them), validated here with one sentence per mistake.
 */
export interface MaintenancePolicy {
  /** How long active runs get to reach their next checkpoint. */
  drainTimeoutMs: number;
  /** At the deadline: suspend the rest at their last checkpoint, or send them to review. */
  onDeadline: "checkpoint_and_stop" | "abort_and_review";
  /** At the deadline, runs with a dispatched, unacknowledged effect: quarantine (review), or fail. */
  unknownSideEffects: "quarantine" | "fail";
  /** Always false: a draining runtime takes no new work. Kept so the file says so. */
  acceptNewWork: false;
}

export const DEFAULT_POLICY: MaintenancePolicy = {
  drainTimeoutMs: 90_000,
  onDeadline: "checkpoint_and_stop",
  unknownSideEffects: "quarantine",
  acceptNewWork: false,
};

export const MAX_DRAIN_TIMEOUT_MS = 24 * 3_600_000;

const KEYS = ["drain_timeout", "on_deadline", "unknown_side_effects", "accept_new_work"] as const;

/**
 * `{ drain_timeout: "90s", on_deadline: "checkpoint_and_stop", unknown_side_effects:
 * "quarantine", accept_new_work: false }`; every key optional. `where` names the source in
 * messages ("policy.yaml", "--policy").
 */
export function parsePolicy(input: unknown, where = "policy"): MaintenancePolicy {
  if (input === null || input === undefined) return { ...DEFAULT_POLICY };
  if (typeof input !== "object" || Array.isArray(input))
    throw invalidInput(`${where}: expected a mapping of policy keys (${KEYS.join(", ")})`);
  const o = input as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!(KEYS as readonly string[]).includes(k))
      throw invalidInput(`${where}: unknown key "${k}" (known: ${KEYS.join(", ")})`);
  }
  const p = { ...DEFAULT_POLICY };
  if (o.drain_timeout !== undefined) p.drainTimeoutMs = drainTimeout(o.drain_timeout, where);
  if (o.on_deadline !== undefined)
    p.onDeadline = oneOf(
      o.on_deadline,
      ["checkpoint_and_stop", "abort_and_review"],
      `${where}: on_deadline`,
    );
  if (o.unknown_side_effects !== undefined)
    p.unknownSideEffects = oneOf(
      o.unknown_side_effects,
      ["quarantine", "fail"],
      `${where}: unknown_side_effects`,
    );
  if (o.accept_new_work !== undefined && o.accept_new_work !== false)
    throw invalidInput(
      `${where}: accept_new_work must be false: a draining runtime never accepts new work`,
    );
  return p;
}

export function drainTimeout(value: unknown, where: string): number {
  const what = `${where}: drain_timeout`;
  if (typeof value !== "string" && typeof value !== "number")
    throw invalidInput(`${what} must be a duration such as "90s"`);
  const ms = toMs(value, what);
  if (ms > MAX_DRAIN_TIMEOUT_MS)
    throw invalidInput(`${what}: ${formatDuration(ms)} is longer than the limit of 24h`);
  return ms;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], what: string): T {
  if (typeof value === "string" && (allowed as readonly string[]).includes(value))
    return value as T;
  throw invalidInput(`${what}: "${String(value)}" is not one of ${allowed.join(", ")}`);
}

/** The policy as a user writes it (what the runtime record stores and `status` shows). */
export function policyToJson(p: MaintenancePolicy): Record<string, unknown> {
  return {
    drain_timeout: durationText(p.drainTimeoutMs),
    on_deadline: p.onDeadline,
    unknown_side_effects: p.unknownSideEffects,
    accept_new_work: p.acceptNewWork,
  };
}

/** The short form when it reads back exactly (90s, 1m30s), else milliseconds (90500ms). */
function durationText(ms: number): string {
  const short = formatDuration(ms);
  try {
    if (parseDuration(short, "") === ms) return short;
  } catch {
    /* not readable back: fall through */
  }
  return `${ms}ms`;
}
