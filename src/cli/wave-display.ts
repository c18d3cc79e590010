import { formatDuration } from "../domain/duration.js";
import { HOST_STATES, type HostCounts } from "../domain/wave-state.js";
import type { Eta } from "../domain/wave-eta.js";

/**
 * How waves look on a terminal: a few lines redrawn in place (progress bar, counts, budget,
 * hosts in flight, ETA) under a scrolling log of host outcomes. Without a terminal the same
 * outcomes are plain lines and nothing is redrawn.
 */
export interface ProgressView {
  wave: string;
  phase: string;
  batch: number | null;
  hosts: number;
  counts: HostCounts;
  maxFailures: number;
  running: { host: string; forMs: number }[];
  eta: Pick<Eta, "at" | "inMs"> | null;
  note?: string | null;
}

export function bar(done: number, total: number, width = 30): string {
  const n = total === 0 ? width : Math.round((done / total) * width);
  return `[${"#".repeat(n)}${"-".repeat(width - n)}]`;
}

export function countsText(c: HostCounts): string {
  return HOST_STATES.filter((s) => c[s] > 0)
    .map((s) => `${c[s]} ${s}`)
    .join(", ");
}

/** The block a live display redraws, cut to the terminal's width (unknown or tiny: 100). */
export function progressLines(v: ProgressView, columns?: number): string[] {
  const width = columns !== undefined && columns >= 20 ? columns : 100;
  const done = v.counts.succeeded + v.counts.failed;
  const head = `wave ${v.wave}  ${bar(done, v.hosts)} ${done}/${v.hosts}${v.batch ? `  batch ${v.batch}` : ""}  (${v.phase})`;
  const budget = `failed ${v.counts.failed} of at most ${v.maxFailures}${v.counts.failed > v.maxFailures ? " (budget spent)" : ""}`;
  const counts = `${countsText(v.counts) || "no hosts"}; ${budget}`;
  const run =
    v.running.length === 0
      ? "in flight: none"
      : `in flight: ${v.running
          .slice(0, 8)
          .map((r) => `${r.host} (${formatDuration(r.forMs)})`)
          .join(", ")}${v.running.length > 8 ? `, +${v.running.length - 8}` : ""}`;
  const eta = v.eta
    ? `ETA ${new Date(v.eta.at).toLocaleTimeString()} (in ${formatDuration(v.eta.inMs)})`
    : "ETA: after the first host finishes";
  const lines = [head, counts, run, eta];
  if (v.note) lines.push(v.note);
  return lines.map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l));
}

/** Redraws a block of lines in place on a terminal, with log lines scrolling above it. */
export class LiveBlock {
  private drawn = 0;

  constructor(private readonly out: NodeJS.WriteStream) {}

  private clear(): void {
    if (this.drawn > 0) this.out.write(`\x1b[${this.drawn}A\x1b[J`);
    this.drawn = 0;
  }

  render(lines: readonly string[]): void {
    this.clear();
    this.out.write(lines.join("\n") + "\n");
    this.drawn = lines.length;
  }

  /** A line that stays (printed above the block). */
  log(line: string, block: readonly string[] | null = null): void {
    this.clear();
    this.out.write(line + "\n");
    if (block) this.render(block);
  }

  /** Leaves the last block on screen. */
  end(): void {
    this.drawn = 0;
  }
}
