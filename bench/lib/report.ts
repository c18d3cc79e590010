/** Plain-text tables and the PASS/MISS verdicts printed beside each target. */

export interface Verdict {
  section: string;
  backend: string;
  target: string;
  value: number;
  pass: boolean;
}

export const verdicts: Verdict[] = [];

/** Records a target's outcome and returns the cell to print. */
export function judge(
  section: string,
  backend: string,
  target: string,
  value: number,
  pass: boolean,
): string {
  verdicts.push({ section, backend, target, value, pass });
  return pass ? "PASS" : "MISS";
}

export function table(title: string, headers: readonly string[], rows: readonly string[][]): void {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  console.log(`\n${title}`);
  console.log(line(headers));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
}

export function note(text: string): void {
  console.log(`  ${text}`);
}

/** Fixed decimals, or "-" for a missing figure. */
export function fmt(n: number | null | undefined, digits = 0): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return "-";
  return n.toLocaleString("en-US", {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

/**
 * Progress of a long loop on stderr: one line rewritten in place on a terminal; in a log (no
 * terminal, where `\r` would run the updates together) a line at every quarter.
 */
export function progress(label: string, done: number, total: number): void {
  if (process.stderr.isTTY) {
    process.stderr.write(`\r${label}: ${done}/${total}${done === total ? "\n" : ""}`);
  } else if (
    done === total ||
    Math.floor((4 * done) / total) > Math.floor((4 * (done - 1)) / total)
  ) {
    process.stderr.write(`${label}: ${done}/${total}\n`);
  }
}
