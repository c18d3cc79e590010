import { createRequire } from "node:module";
import type * as YamlLib from "yaml";
import type { z as ZodNamespace } from "zod";
import { invalidInput } from "../domain/errors.js";
import {
  checkDuration,
  checkGrace,
  checkHttpUrl,
  checkIntRange,
  checkStore,
  checkSystem,
  checkText,
  describeValue,
  FieldProblem,
} from "./field-checks.js";
import { checkAcceptList, checkPathList, type AcceptEntry } from "./audit-fields.js";

/** quiesce.yaml, read: durations in ms, keys in camelCase. Every field is optional. */
export interface ConfigFile {
  store?: string;
  system?: string;
  alerts?: {
    /** `retries`: attempts after the first one fails (so 2 means up to 3 POSTs). */
    webhook?: { url: string; timeoutMs?: number; retries?: number };
    command?: string;
  };
  takeover?: {
    probe?: string;
    probeTimeoutMs?: number;
    /** null: `never`. */
    remoteGraceMs?: number | null;
  };
  check?: { maxHoldMs?: number };
  /** `quiesce audit`: more roots, and legacy locks that are known and documented. */
  audit?: { paths?: string[]; accept?: AcceptEntry[] };
}

export const WEBHOOK_RETRIES = { min: 1, max: 10 } as const;

// zod and yaml are loaded on first use: most invocations have no config file, and loading
// them costs a tenth of a second of every CLI call's start-up.
const requireCjs = createRequire(import.meta.url);
type Zod = typeof ZodNamespace;
let zodLib: Zod | undefined;
let yamlLib: typeof YamlLib | undefined;
const zod = (): Zod => (zodLib ??= (requireCjs("zod") as { z: Zod }).z);
const yaml = (): typeof YamlLib => (yamlLib ??= requireCjs("yaml") as typeof YamlLib);

const webhookKeys = ["url", "timeout", "retries"] as const;
const alertsKeys = ["webhook", "command"] as const;
const takeoverKeys = ["probe", "probe_timeout", "remote_grace"] as const;
const checkKeys = ["max_hold"] as const;
const auditKeys = ["paths", "accept"] as const;
const rootKeys = ["store", "system", "alerts", "takeover", "check", "audit"] as const;

let fileSchema: ReturnType<typeof buildSchema> | undefined;

function buildSchema(z: Zod) {
  /** A value checked by one of field-checks.ts; its FieldProblem becomes a zod issue. */
  function field<T>(check: (v: unknown) => T) {
    return z.unknown().transform((v, ctx): T => {
      try {
        return check(v);
      } catch (e) {
        if (!(e instanceof FieldProblem)) throw e;
        ctx.addIssue({ code: "custom", message: e.message });
        return z.NEVER;
      }
    });
  }
  const optional = <T>(check: (v: unknown) => T) => field(check).optional();
  const positive = (v: unknown) => checkDuration(v, { allowZero: false });

  /** `alerts:` with only commented-out lines under it is YAML null: read it as absent. */
  function section<S extends ZodNamespace.core.$ZodLooseShape>(shape: S) {
    return z.preprocess((v) => (v === null ? undefined : v), z.strictObject(shape).optional());
  }

  const webhookShape = {
    url: field(checkHttpUrl),
    timeout: optional(positive),
    retries: optional((v) => checkIntRange(v, WEBHOOK_RETRIES.min, WEBHOOK_RETRIES.max)),
  };
  const alertsShape = { webhook: section(webhookShape), command: optional(checkText) };
  const takeoverShape = {
    probe: optional(checkText),
    probe_timeout: optional(positive),
    remote_grace: optional(checkGrace),
  };
  const checkShape = { max_hold: optional(positive) };
  const rootShape = {
    store: optional(checkStore),
    system: optional(checkSystem),
    alerts: section(alertsShape),
    takeover: section(takeoverShape),
    check: section(checkShape),
    audit: section({ paths: optional(checkPathList), accept: optional(checkAcceptList) }),
  };
  return z.strictObject(rootShape);
}

/** The settings each mapping accepts, for "unknown setting" messages. */
const ACCEPTS: Record<string, readonly string[]> = {
  "": rootKeys,
  alerts: alertsKeys,
  "alerts.webhook": webhookKeys,
  takeover: takeoverKeys,
  check: checkKeys,
  audit: auditKeys,
};

function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let v = data;
  for (const key of path)
    v = v && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[key] : undefined;
  return v;
}

/** One zod issue as `path: predicate` (or just the predicate for the file as a whole). */
function describeIssue(issue: ZodNamespace.core.$ZodIssue, data: unknown): string {
  const at = (path: readonly PropertyKey[]) => path.map(String).join(".");
  const subject = (path: readonly PropertyKey[]) => (path.length === 0 ? "" : `${at(path)}: `);
  if (issue.code === "unrecognized_keys") {
    const where = issue.path.length === 0 ? "the file" : at(issue.path);
    const accepts = (ACCEPTS[at(issue.path)] ?? []).join(", ");
    const key = [...issue.path, issue.keys[0] ?? ""];
    return `${subject(key)}unknown setting; ${where} accepts ${accepts}`;
  }
  if (issue.code === "invalid_type") {
    // Leaves are z.unknown(), so only a section or the file itself can have the wrong type.
    const got = describeValue(valueAt(data, issue.path));
    return `${subject(issue.path)}expected a mapping of settings, got ${got}`;
  }
  // "custom": a field check's own sentence; nothing else can arise from this schema.
  return `${subject(issue.path)}${issue.message}`;
}

/**
 * Parses and validates the text of a config file. `file` names it in every error, which is one
 * sentence, thrown as INVALID_INPUT: `quiesce.yaml: alerts.webhook.timeout: "5x" is not a
 * duration (...)`, `quiesce.yaml: line 3, column 7: invalid YAML: ...`.
 */
export function parseConfigText(text: string, file: string): ConfigFile {
  const doc = yaml().parseDocument(text);
  const syntax = doc.errors[0];
  if (syntax) {
    const pos = syntax.linePos?.[0];
    const where = pos ? `line ${pos.line}, column ${pos.col}: ` : "";
    // yaml's message repeats the position and appends a code excerpt: keep the first clause.
    const what = syntax.message.split("\n")[0]?.replace(/ at line \d+, column \d+:?$/, "") ?? "";
    throw invalidInput(`${file}: ${where}invalid YAML: ${what}`);
  }
  const data: unknown = doc.toJS() ?? {}; // an empty or comment-only file configures nothing
  const parsed = (fileSchema ??= buildSchema(zod())).safeParse(data);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw invalidInput(`${file}: ${first ? describeIssue(first, data) : "is not valid"}`);
  }
  const { store, system, alerts, takeover, check, audit } = parsed.data;
  const out: ConfigFile = {};
  if (store !== undefined) out.store = store;
  if (system !== undefined) out.system = system;
  if (alerts) {
    out.alerts = {};
    const w = alerts.webhook;
    if (w)
      out.alerts.webhook = dropUndefined({ url: w.url, timeoutMs: w.timeout, retries: w.retries });
    if (alerts.command !== undefined) out.alerts.command = alerts.command;
  }
  if (takeover) {
    out.takeover = dropUndefined({
      probe: takeover.probe,
      probeTimeoutMs: takeover.probe_timeout,
      remoteGraceMs: takeover.remote_grace,
    });
  }
  if (check) out.check = dropUndefined({ maxHoldMs: check.max_hold });
  if (audit) out.audit = dropUndefined({ paths: audit.paths, accept: audit.accept });
  return out;
}

/** Absent settings stay absent (not `key: undefined`), so deepEqual in tests means what it says. */
function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
