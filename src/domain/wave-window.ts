import { invalidInput } from "./errors.js";

/**
 * A maintenance window: hosts start only inside it (hosts in flight when it closes finish).
 *
 *     Sat 02:00-06:00            Saturdays, agent's local time
 *     Sat,Sun 22:00-02:00        crosses midnight: ends 02:00 the next day
 *     Mon-Fri 01:00-05:00 UTC    weekdays, UTC
 *     daily 03:00-04:00          every day (also "*" or no day at all)
 *
 * The functions here are pure: they work on "local milliseconds" (epoch ms shifted by the
 * zone's offset, so that the UTC calendar fields of that number read as local wall time).
 * Callers convert with the offset in force (see `localMs`).
 */
export interface WaveWindow {
  /** 0 = Sunday ... 6 = Saturday. */
  days: readonly boolean[];
  /** Minutes after midnight. */
  startMin: number;
  /** Length in minutes, 1 .. 1440 (end <= start means the window ends the next day). */
  lengthMin: number;
  utc: boolean;
  /** As the user wrote it. */
  text: string;
}

const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const DAY_MS = 86_400_000;
const MIN_MS = 60_000;

export function parseWindow(text: string, what = "--window"): WaveWindow {
  const fail = (why: string) =>
    invalidInput(
      `${what}: "${text}" is not a window (${why}); write e.g. 'Sat 02:00-06:00', 'Mon-Fri 01:00-05:00 UTC' or 'daily 03:00-04:00'`,
    );
  const parts = text.trim().split(/\s+/).filter(Boolean);
  let utc = false;
  if (parts.length > 0 && /^utc$/i.test(parts[parts.length - 1]!)) {
    utc = true;
    parts.pop();
  }
  if (parts.length === 0) throw fail("it is empty");
  if (parts.length > 2) throw fail("too many parts");
  const range = parts.pop()!;
  const days = parts.length === 0 ? Array<boolean>(7).fill(true) : parseDays(parts[0]!, fail);
  const m = /^(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})$/.exec(range);
  if (!m) throw fail(`cannot read the times "${range}" (HH:MM-HH:MM)`);
  const [sh, sm, eh, em] = [m[1], m[2], m[3], m[4]].map(Number) as [number, number, number, number];
  if (sh > 23 || sm > 59) throw fail(`${m[1]}:${m[2]} is not a time of day`);
  if (eh > 24 || em > 59 || (eh === 24 && em !== 0))
    throw fail(`${m[3]}:${m[4]} is not a time of day`);
  const startMin = sh * 60 + sm;
  const endMin = eh * 60 + em;
  if (endMin === startMin) throw fail("it starts and ends at the same time");
  const lengthMin = endMin > startMin ? endMin - startMin : endMin + 1440 - startMin;
  return { days, startMin, lengthMin, utc, text: text.trim() };
}

function parseDays(spec: string, fail: (why: string) => Error): boolean[] {
  const days = Array<boolean>(7).fill(false);
  if (/^(daily|\*)$/i.test(spec)) return days.fill(true);
  for (const item of spec.toLowerCase().split(",")) {
    const range = item.split("-");
    if (range.length > 2 || range.some((d) => d === ""))
      throw fail(`cannot read the days "${spec}"`);
    const idx = range.map((d) => {
      const i = DAY_NAMES.indexOf(d.slice(0, 3));
      if (i < 0 || !"sunday monday tuesday wednesday thursday friday saturday".includes(d))
        throw fail(`"${d}" is not a day (Mon, Tue, ... Sun)`);
      return i;
    });
    const [from, to = from] = idx as [number, number?];
    for (let d = from; ; d = (d + 1) % 7) {
      days[d] = true;
      if (d === to) break;
    }
  }
  return days;
}

/** Local ms for `utcMs`, with the zone offset in minutes (as Date#getTimezoneOffset gives it). */
export function localMs(utcMs: number, offsetMin: number): number {
  return utcMs - offsetMin * MIN_MS;
}

/** The opening [start, end) in local ms that contains `local`, or null when closed. */
export function openInterval(w: WaveWindow, local: number): { start: number; end: number } | null {
  const dayStart = Math.floor(local / DAY_MS) * DAY_MS;
  // Today's opening, or yesterday's that runs past midnight.
  for (const start of [dayStart + w.startMin * MIN_MS, dayStart - DAY_MS + w.startMin * MIN_MS]) {
    const end = start + w.lengthMin * MIN_MS;
    if (local >= start && local < end && w.days[weekday(start)]) return { start, end };
  }
  return null;
}

/** The next opening at or after `local` (local ms); null only for a window with no day. */
export function nextOpening(w: WaveWindow, local: number): { start: number; end: number } | null {
  const open = openInterval(w, local);
  if (open) return open;
  const dayStart = Math.floor(local / DAY_MS) * DAY_MS;
  for (let d = 0; d <= 7; d++) {
    const start = dayStart + d * DAY_MS + w.startMin * MIN_MS;
    if (start >= local && w.days[weekday(start)])
      return { start, end: start + w.lengthMin * MIN_MS };
  }
  return null;
}

function weekday(local: number): number {
  // 1970-01-01 was a Thursday.
  return (Math.floor(local / DAY_MS) + 4) % 7;
}

/**
 * When `workMs` of wall time, spent only while the window is open, is done, starting at
 * `local`: the ETA of a wave that must pause while the window is closed. null if it never is.
 */
export function finishWithin(w: WaveWindow | null, local: number, workMs: number): number | null {
  if (w === null) return local + workMs;
  let t = local;
  let left = workMs;
  for (let i = 0; i < 10_000; i++) {
    const o = nextOpening(w, t);
    if (!o) return null;
    const from = Math.max(t, o.start);
    if (left <= o.end - from) return from + left;
    left -= o.end - from;
    t = o.end;
  }
  return null;
}
