/**
 * Where a CLI process's start-up time goes, for bench/startup and for anyone asking why
 * `quiesce run` is slower than a bare node: with QUIESCE_STARTUP_MARKS=1 each named step
 * records the milliseconds since the process started (performance.now() counts from there),
 * and one line goes to stderr at exit. Unset, a mark costs one comparison.
 *
 * bin/quiesce.js, which loads none of the CLI, leaves its own start time on globalThis
 * (BIN_STARTED) for the first mark to pick up as "bin started".
 */
interface MarkList {
  marks: [string, number][];
}
const KEY = Symbol.for("quiesce.startupMarks");
const BIN_STARTED = Symbol.for("quiesce.binStarted");
const enabled = process.env.QUIESCE_STARTUP_MARKS === "1";

export function startupMark(name: string): void {
  if (!enabled) return;
  const g = globalThis as { [KEY]?: MarkList; [BIN_STARTED]?: number };
  let list = g[KEY];
  if (list === undefined) {
    list = g[KEY] = { marks: [] };
    if (g[BIN_STARTED] !== undefined) list.marks.push(["bin started", g[BIN_STARTED]]);
    process.once("exit", () => printMarks(list!));
  }
  list.marks.push([name, performance.now()]);
}

function printMarks(list: MarkList): void {
  list.marks.push(["exit", performance.now()]);
  const line = list.marks.map(([name, ms]) => `${name}=${ms.toFixed(1)}`).join("; ");
  process.stderr.write(`quiesce startup marks (ms since process start): ${line}\n`);
}
