import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { CLI } from "./paths.js";

/**
 * Loss events that a test's holder could not write (its store was made to fail) are spooled
 * in a directory of this test process, never in the machine's own outbox beside the default
 * store: every later quiesce process on the host would find the files there, for stores long
 * gone, and pay for looking at them at each start. scripts/run-tests.mjs sets one for the
 * whole suite; this covers a test file run alone (`node --test dist/tests/...`).
 */
let ownOutbox: string | null = null;
function outboxDir(): string {
  if (process.env.QUIESCE_OUTBOX_DIR) return process.env.QUIESCE_OUTBOX_DIR;
  if (ownOutbox === null) {
    const dir = mkdtempSync(join(tmpdir(), "quiesce-test-outbox-"));
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    ownOutbox = dir;
  }
  return ownOutbox;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  pid: number;
  /** Resolves when the process exits and its output is read. */
  done: Promise<CliResult>;
  /** Resolves as soon as the process exits (its pipes may still be open in a grandchild). */
  exited: Promise<void>;
  stdout(): string;
  stderr(): string;
}

/** Starts the real `quiesce` CLI as a separate process. */
export function startCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): CliProcess {
  return startProcess(process.execPath, [CLI, ...args], env);
}

/**
 * Starts `file` with `args` (the CLI, or a wrapper that ends by exec'ing it: `ip netns exec`,
 * `faketime`) and collects its output.
 */
export function startProcess(
  file: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): CliProcess {
  const child = spawn(file, args, {
    env: { ...process.env, QUIESCE_DEBUG: "", QUIESCE_OUTBOX_DIR: outboxDir(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  // Resolve on exit, not on 'close': a command that outlives quiesce (SIGKILL tests) keeps the
  // inherited stdout/stderr pipes open. Give the pipes a moment to drain, then stop waiting.
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const done = new Promise<CliResult>((resolve) =>
    child.once("exit", (code, signal) => {
      const drained = Promise.race([closed, new Promise((r) => setTimeout(r, 2000))]);
      void drained.then(() => resolve({ code, signal, stdout: out, stderr: err }));
    }),
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const seq = ++started;
  running.set(child, seq);
  child.once("exit", () => running.delete(child));
  return { child, pid: child.pid!, done, exited, stdout: () => out, stderr: () => err };
}

/**
 * Every process the tests started and that has not exited, with its start number. A test that
 * fails half-way leaves its processes behind: a holder stopped with SIGSTOP, a holder waiting
 * for a file that will never be written. Their pipes keep the test file's process alive, and
 * the suite would hang until CI's time limit instead of failing with a name.
 */
const running = new Map<ChildProcess, number>();
let started = 0;

/** How many processes have been started so far (a mark for killStartedSince). */
export function startedSoFar(): number {
  return started;
}

/** SIGKILLs (and lets go of) every process started after `mark` that is still running. */
export function killStartedSince(mark: number): void {
  for (const [child, seq] of running) {
    if (seq <= mark) continue;
    try {
      // SIGKILL also ends a stopped process; SIGCONT is not needed.
      process.kill(child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
    // A grandchild (the command of a killed `quiesce run`) may still hold the pipes open.
    child.stdout?.destroy();
    child.stderr?.destroy();
    child.unref();
    running.delete(child);
  }
}

// The backstop: whatever a test file left running is gone when its tests are done.
after(() => killStartedSince(0));

export function cli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return startCli(args, env).done;
}

/** Polls `check` until it returns a value (not undefined/false) or the timeout passes. */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== null && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The process exists and is not a zombie (killed, not yet reaped by its new parent). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/PID/stat: "pid (comm) S ...": comm may hold spaces and parentheses; the state
    // follows the last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false; // gone between the two looks
  }
}
