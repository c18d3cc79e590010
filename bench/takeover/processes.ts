import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

/** A compiled script of this folder, started as its own process. */
export function startScript(
  name: string,
  args: readonly string[],
): { child: ChildProcess; lines: AsyncIterator<string> } {
  const path = fileURLToPath(new URL(`./${name}.js`, import.meta.url));
  const child = spawn(process.execPath, [path, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  return { child, lines: lineIterator(child) };
}

function lineIterator(child: ChildProcess): AsyncIterator<string> {
  let buf = "";
  const queue: string[] = [];
  const waiting: ((v: IteratorResult<string>) => void)[] = [];
  let ended = false;
  child.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const w = waiting.shift();
      if (w) w({ value: line, done: false });
      else queue.push(line);
    }
  });
  child.once("close", () => {
    ended = true;
    for (const w of waiting.splice(0)) w({ value: undefined, done: true });
  });
  return {
    next: () =>
      new Promise((resolve) => {
        const line = queue.shift();
        if (line !== undefined) resolve({ value: line, done: false });
        else if (ended) resolve({ value: undefined, done: true });
        else waiting.push(resolve);
      }),
  };
}

export async function nextLine(it: AsyncIterator<string>, what: string): Promise<string> {
  const r = await it.next();
  if (r.done) throw new Error(`${what}: the process ended before printing a line`);
  return r.value;
}

export function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
}
