import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

export const STRACE = "/usr/bin/strace";

export function straceAvailable(): boolean {
  return existsSync(STRACE);
}

export interface FsyncTrace {
  /** Epoch ms of every fsync/fdatasync the traced process started while attached. */
  stop(): Promise<number[]>;
}

/**
 * Attaches strace to a running process (all its threads) and records when it calls fsync or
 * fdatasync. ptrace stops the process at every system call while attached, so time nothing
 * under it: count calls inside a window whose ends the traced process reports.
 */
export async function traceFsyncs(pid: number, dir: string): Promise<FsyncTrace> {
  const out = join(dir, `strace-${pid}-${Date.now()}.txt`);
  const child = spawn(
    STRACE,
    ["-f", "-ttt", "-e", "trace=fsync,fdatasync", "-o", out, "-p", String(pid)],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  let err = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
      if (/attached/.test(err)) resolve();
    });
    child.on("error", reject);
    void exited.then((code) =>
      reject(new Error(`strace exited (${code}) before attaching: ${err}`)),
    );
  });
  return {
    async stop() {
      child.kill("SIGINT"); // detaches from the traced process and flushes the output file
      await exited;
      const text = readFileSync(out, "utf8");
      rmSync(out, { force: true });
      return parseFsyncTimes(text);
    },
  };
}

/** `1234 1700000000.123456 fdatasync(5 <unfinished ...>` and the like; resumed lines skipped. */
export function parseFsyncTimes(text: string): number[] {
  const times: number[] = [];
  for (const m of text.matchAll(/(\d+\.\d+) f(?:data)?sync\(/g)) {
    times.push(Number(m[1]) * 1000);
  }
  return times;
}

export function countBetween(times: readonly number[], from: number, to: number): number {
  return times.filter((t) => t >= from && t <= to).length;
}
