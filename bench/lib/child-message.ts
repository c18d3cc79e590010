import type { ChildProcess } from "node:child_process";

/**
 * The next IPC message of `type` from a benchmark's child process; rejects on an `error`
 * message, the child's exit, or `timeoutMs`. `who` names the child in those errors.
 */
export function nextMessage<M extends { type: string }, T extends M["type"]>(
  child: ChildProcess,
  who: string,
  type: T,
  timeoutMs: number,
): Promise<Extract<M, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`${who}: no "${type}" within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onMessage = (m: M) => {
      if (m.type === "error")
        fail(new Error(`${who}: ${(m as unknown as { message: string }).message}`));
      else if (m.type === type) done(() => resolve(m as Extract<M, { type: T }>));
    };
    const onExit = (code: number | null) => fail(new Error(`${who} exited (${code})`));
    const done = (then: () => void) => {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
      then();
    };
    const fail = (e: Error) => done(() => reject(e));
    child.on("message", onMessage);
    child.on("exit", onExit);
  });
}
