import { invalidInput } from "./errors.js";
import { validateEffectKey, validateRunId } from "./journal-names.js";
import { validateScope } from "./names.js";

/**
 * What `wave create` is given, checked completely before anything is written: one sentence
 * per mistake, naming the flag or the line of the hosts file.
 */

const WAVE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const GROUP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const MAX_WAVE_NAME = 40;
export const MAX_GROUP_NAME = 64;
/** A hosts file larger than this is a mistake (a binary, a log), not a fleet. */
export const MAX_HOSTS = 1_000_000;

export function validateWaveName(name: string, what = "wave name"): string {
  if (name.length === 0) throw invalidInput(`${what}: it is empty`);
  if (name.length > MAX_WAVE_NAME)
    throw invalidInput(
      `${what}: "${name}" is ${name.length} characters; the limit is ${MAX_WAVE_NAME}`,
    );
  if (!WAVE_NAME.test(name))
    throw invalidInput(
      `${what}: "${name}" is not valid (letters, digits and . _ - only, e.g. patch-2024-06)`,
    );
  return name;
}

/** The lease the wave's agent holds; every host state change is fenced by it (I3). */
export function waveScope(wave: string): string {
  return `wave:${wave}`;
}

/** The lease an agent holds on a host while it works on it; other systems take the same. */
export function hostScope(host: string): string {
  return `host:${host}`;
}

/** The runtime record of the wave's agent (the maintenance protocol: `wave stop`). */
export function waveRuntimeId(wave: string): string {
  return `wave:${wave}`;
}

/** The journal run of one host's patch. */
export function hostRunId(wave: string, host: string): string {
  return `wave:${wave}:${host}`;
}

/** The idempotency key of one host's patch (the issue's `wave:NAME:host:HOST:patch`). */
export function patchKey(wave: string, host: string): string {
  return `wave:${wave}:host:${host}:patch`;
}

export interface HostEntry {
  host: string;
  /** null: in no group (never limited by --max-per-group). */
  group: string | null;
}

/**
 * One host a line, optionally `group=NAME`; blank lines and `#` comments are ignored. The host
 * names must be usable in the lease scope, journal run id and idempotency key derived from
 * them, so they are checked against those limits for this wave's name.
 */
export function parseHostsFile(text: string, wave: string, source = "hosts file"): HostEntry[] {
  const out: HostEntry[] = [];
  const seen = new Map<string, number>();
  const lines = text.split(/\r?\n/);
  if (lines.length > MAX_HOSTS)
    throw invalidInput(`${source}: ${lines.length} lines; the limit is ${MAX_HOSTS} hosts`);
  lines.forEach((raw, i) => {
    const lineNo = i + 1;
    const line = raw.replace(/#.*$/, "").trim();
    if (line === "") return;
    const [host, ...fields] = line.split(/\s+/);
    const where = `${source} line ${lineNo}`;
    checkHostName(host!, wave, where);
    let group: string | null = null;
    for (const f of fields) {
      const m = /^group=(.*)$/.exec(f);
      if (!m)
        throw invalidInput(`${where}: unknown field "${f}" (only group=NAME may follow a host)`);
      if (group !== null) throw invalidInput(`${where}: group= is given twice`);
      group = checkGroup(m[1]!, where);
    }
    const first = seen.get(host!);
    if (first !== undefined)
      throw invalidInput(
        `${source}: host ${host} is listed twice (lines ${first} and ${lineNo}); list each host once`,
      );
    seen.set(host!, lineNo);
    out.push({ host: host!, group });
  });
  if (out.length === 0)
    throw invalidInput(`${source}: no hosts (one host a line, optionally followed by group=NAME)`);
  return out;
}

function checkHostName(host: string, wave: string, where: string): void {
  if (!HOST_NAME.test(host))
    throw invalidInput(
      `${where}: "${host}" is not a host name (letters, digits and . _ - only, starting with a letter or digit)`,
    );
  try {
    validateScope(hostScope(host));
    validateRunId(hostRunId(wave, host));
    validateEffectKey(patchKey(wave, host));
  } catch {
    const limit = 120 - hostRunId(wave, "").length;
    throw invalidInput(
      `${where}: host name ${host} is ${host.length} characters; a wave named ${wave} allows at most ${limit}`,
    );
  }
}

function checkGroup(group: string, where: string): string {
  if (group.length === 0 || group.length > MAX_GROUP_NAME || !GROUP_NAME.test(group))
    throw invalidInput(
      `${where}: group "${group}" is not valid (letters, digits and . _ - only, at most ${MAX_GROUP_NAME})`,
    );
  return group;
}

/** `--batch 5` or `--batch 10%`: an absolute count or a share of the wave's hosts. */
export type CountSpec = { kind: "count"; n: number } | { kind: "percent"; p: number };

export function specText(s: CountSpec): string {
  return s.kind === "count" ? String(s.n) : `${s.p}%`;
}

function parseCountSpec(text: string, what: string): CountSpec {
  const t = text.trim();
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(t);
  if (pct) {
    const p = Number(pct[1]);
    if (p > 100) throw invalidInput(`${what}: ${t} is over 100% of the hosts`);
    return { kind: "percent", p };
  }
  if (!/^\d+$/.test(t))
    throw invalidInput(`${what}: "${text}" is neither a number of hosts (5) nor a share (10%)`);
  return { kind: "count", n: Number(t) };
}

/** The batch: at least one host. A share is rounded up (10% of 15 hosts is 2). */
export function parseBatch(
  text: string,
  hosts: number,
  what = "--batch",
): {
  spec: CountSpec;
  size: number;
} {
  const spec = parseCountSpec(text, what);
  const size =
    spec.kind === "count" ? spec.n : Math.ceil(Math.round(((spec.p * hosts) / 100) * 1e6) / 1e6);
  if (size < 1)
    throw invalidInput(
      spec.kind === "count" || spec.p === 0
        ? `${what}: a batch of 0 hosts would never patch anything; give at least 1 (or a share above 0%)`
        : `${what}: ${specText(spec)} of ${hosts} hosts is less than one host`,
    );
  return { spec, size: Math.min(size, hosts) };
}

/**
 * The failure budget over the whole wave: how many hosts may fail before the wave stops. A
 * share is rounded down (10% of 15 hosts tolerates 1 failure); 0 stops at the first failure.
 */
export function parseFailureBudget(
  text: string,
  hosts: number,
  what = "--max-failures",
): { spec: CountSpec; max: number } {
  const spec = parseCountSpec(text, what);
  if (spec.kind === "count" && spec.n > hosts)
    throw invalidInput(
      `${what}: ${spec.n} failures is more than the ${hosts} host(s) of the wave (over 100%)`,
    );
  const max =
    spec.kind === "count" ? spec.n : Math.floor(Math.round(((spec.p * hosts) / 100) * 1e6) / 1e6);
  return { spec, max };
}

export function parsePositiveInt(text: string, what: string): number {
  const t = text.trim();
  if (!/^\d+$/.test(t) || Number(t) < 1 || Number(t) > 1_000_000)
    throw invalidInput(`${what}: "${text}" is not a positive whole number`);
  return Number(t);
}
