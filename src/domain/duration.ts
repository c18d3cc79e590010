import { invalidInput } from "./errors.js";

/** Milliseconds per unit accepted on the command line and in config. */
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS;
/** Units in the order a compound duration must use them ("1h30m", never "30m1h"). */
const UNIT_ORDER: readonly Unit[] = ["d", "h", "m", "s", "ms"];

const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

/**
 * Parses `250ms`, `90s`, `5m`, `1h30m`, `1.5s`. A bare number, a negative value, an unknown
 * unit or units out of order are errors that name `what` (usually the flag), so a user sees
 * "--ttl: "90x" is not a duration" rather than a silent default.
 */
export function parseDuration(text: string, what: string): number {
  const input = text.trim();
  const fail = (why: string) =>
    invalidInput(`${what}: "${text}" is not a duration (${why}); use e.g. 250ms, 90s, 5m, 1h30m`);
  if (input === "") throw fail("it is empty");
  if (input.startsWith("-")) throw fail("it is negative");
  if (/^\d+(\.\d+)?$/.test(input)) throw fail("it has no unit");
  let total = 0;
  let pos = 0;
  let lastRank = -1;
  PART.lastIndex = 0;
  while (pos < input.length) {
    PART.lastIndex = pos;
    const m = PART.exec(input);
    if (!m) throw fail(`cannot read "${input.slice(pos)}"`);
    const unit = m[2] as Unit;
    const rank = UNIT_ORDER.indexOf(unit);
    if (rank <= lastRank) throw fail("units must go from largest to smallest, each once");
    lastRank = rank;
    total += Number(m[1]) * UNIT_MS[unit];
    pos = PART.lastIndex;
  }
  if (!Number.isFinite(total) || total > Number.MAX_SAFE_INTEGER) throw fail("it is too large");
  return Math.round(total);
}

/** Accepts a duration string or a number of milliseconds (library callers). */
export function toMs(value: string | number, what: string): number {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value < 0) {
      throw invalidInput(`${what}: ${value} is not a non-negative number of milliseconds`);
    }
    return Math.round(value) + 0; // + 0 turns -0 into 0
  }
  return parseDuration(value, what);
}

/** Short human form: 950ms, 12.3s, 4m05s, 2h10m, 3d4h. */
export function formatDuration(ms: number): string {
  const a = Math.abs(Math.round(ms));
  const sign = ms < 0 && a > 0 ? "-" : "";
  if (a < 1000) return `${sign}${a}ms`;
  // Rounded in integers, halves up (1005 ms is 1.01s), as the PostgreSQL store's
  // quiesce_duration() does in its messages; toFixed rounds the binary value (1.00s).
  if (a < 10_000) return `${sign}${decimal(Math.round(a / 10), 2)}s`;
  if (a < 60_000) return `${sign}${decimal(Math.round(a / 100), 1)}s`;
  if (a < 3_600_000) {
    const m = Math.floor(a / 60_000);
    const s = Math.floor((a % 60_000) / 1000);
    return `${sign}${m}m${String(s).padStart(2, "0")}s`;
  }
  if (a < 86_400_000) {
    const h = Math.floor(a / 3_600_000);
    const m = Math.floor((a % 3_600_000) / 60_000);
    return `${sign}${h}h${String(m).padStart(2, "0")}m`;
  }
  const d = Math.floor(a / 86_400_000);
  const h = Math.floor((a % 86_400_000) / 3_600_000);
  return `${sign}${d}d${h}h`;
}

/** `units` hundredths (places 2) or tenths (places 1) as a decimal, trailing zeros dropped. */
function decimal(units: number, places: 1 | 2): string {
  const scale = places === 2 ? 100 : 10;
  const fraction = String(units % scale).padStart(places, "0");
  return `${Math.floor(units / scale)}.${fraction}`.replace(/\.?0+$/, "");
}
