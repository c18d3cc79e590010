/**
 * `new Date(ms).toISOString()`, without a Date per call: a listing of 10,000 leases formats
 * 30,000 times, and toISOString was the largest single cost of turning them into JSON. The date
 * part is formatted once per UTC day and kept; the time of day is arithmetic (a JavaScript day
 * is always 86,400,000 ms: no leap seconds). Anything unusual goes to toISOString itself.
 */
const DAY_MS = 86_400_000;
/** Beyond this, Date is invalid (toISOString throws a RangeError, which callers keep getting). */
const MAX_DATE_MS = 8.64e15;
const MAX_DAYS_KEPT = 64;
const days = new Map<number, string>();

export function iso(ms: number): string {
  if (!Number.isInteger(ms) || Math.abs(ms) > MAX_DATE_MS) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  let date = days.get(day);
  if (date === undefined) {
    const full = new Date(ms).toISOString();
    if (days.size >= MAX_DAYS_KEPT) days.clear();
    date = full.slice(0, -"HH:MM:SS.mmmZ".length); // "YYYY-MM-DDT", or "+YYYYYY-MM-DDT"
    days.set(day, date);
  }
  let t = ms - day * DAY_MS;
  const h = Math.floor(t / 3_600_000);
  t -= h * 3_600_000;
  const m = Math.floor(t / 60_000);
  t -= m * 60_000;
  const s = Math.floor(t / 1000);
  const milli = t - s * 1000;
  return `${date}${two(h)}:${two(m)}:${two(s)}.${milli < 100 ? (milli < 10 ? "00" : "0") : ""}${milli}Z`;
}

function two(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}
