/**
 * `quiesce events --json | head`: once the reader is gone, writing to stdout fails with EPIPE.
 * That is not an error of ours: further output is dropped quietly, the command finishes as it
 * would have (a lease is still released, a wave still runs to its end), and loops that only
 * print (`--follow`) are told to stop.
 */
const listeners = new Set<() => void>();
let closed = false;

export function handleClosedStdout(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") {
      process.stderr.write(`quiesce: cannot write to stdout: ${e.message}\n`);
      process.exit(1);
    }
    if (closed) return;
    closed = true;
    stream.write = () => true;
    for (const fn of listeners) fn();
  });
}

/** Calls `fn` once stdout's reader has gone (at once if it already has). */
export function onStdoutClosed(fn: () => void): () => void {
  if (closed) {
    fn();
    return () => undefined;
  }
  listeners.add(fn);
  return () => listeners.delete(fn);
}
