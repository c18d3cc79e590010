import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import type { Socket } from "node:net";
import type { Readable, Writable } from "node:stream";
import { readClock } from "./clock.js";
import { GUARD_SCRIPT } from "./guard-script.generated.js";

/**
 * What a guard reports once the command has exited: `armed` (its deadline had not passed),
 * `fired_ended` (the deadline passed after the command had exited: its exit code is its own),
 * `fired_running` (the deadline passed while it ran: it was terminated), `unguarded` (no guard
 * could answer).
 */
export type GuardReport = "armed" | "fired_ended" | "fired_running" | "unguarded";

/** The deadline a guard enforces: how long from now, re-read after every renewal. */
export interface DeadlineSource {
  /** Milliseconds until the local deadline; 0 once lost or released. */
  remainingMs(): number;
  /** Calls `fn` after every successful renewal; returns the unsubscribe. */
  onRenewed(fn: () => void): () => void;
}

export interface GuardEvents {
  /** The guard began to stop the command (its deadline passed, or `fire()`). */
  onFired?: (commandHadEnded: boolean) => void;
  /** The guard process died unexpectedly and a new one took its place. */
  onReplaced?: (why: string) => void;
  /** The guard died and could not be replaced: the caller must stop the command itself. */
  onUnguarded?: (why: string) => void;
}

const MAX_REPLACEMENTS = 10;
const BASH_PATHS = ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"];
const SETSID_PATHS = ["/usr/bin/setsid", "/bin/setsid", "/usr/local/bin/setsid"];

/**
 * A guard that the command's gate started before the lease was taken (child-runner.ts,
 * `GroupChild.start` with `launchGuard`): not armed until the first `arm`, and not our child,
 * so we know it by its two pipes. Its end of `lines` closing means it is gone.
 */
export interface LaunchedGuard {
  /** Our end of the guard's input (its creator handles its errors: the output's close decides). */
  commands: Writable;
  /** Our end of the guard's output. */
  lines: Readable;
}

/** Why no guard can run on this machine, or null when one can (Linux /proc and bash). */
export function guardUnavailable(): string | null {
  if (process.platform !== "linux" || !existsSync("/proc/uptime"))
    return "the deadline guard needs Linux (/proc)";
  if (bashPath() === null) return "the deadline guard needs bash (not found in /bin or /usr/bin)";
  return null;
}

export function bashPath(): string | null {
  return BASH_PATHS.find((p) => existsSync(p)) ?? null;
}

/** util-linux's setsid, which the gate needs to start a guard outside the command's group. */
export function setsidPath(): string | null {
  return SETSID_PATHS.find((p) => existsSync(p)) ?? null;
}

/** The process a guard runs in: spawned by us (a child), or started by the command's gate. */
interface GuardLink {
  /** Known at once for a child; from its `ready PID` line for one the gate started. */
  pid: number | undefined;
  commands: Writable;
}

/**
 * The holder's handle on a deadline guard (src/process/guard.sh): a separate process that
 * terminates the command's process group when the lease's local deadline passes, even while
 * this process is stopped, starved or dead. The holder re-arms it after every renewal (one
 * line on a pipe). If the guard dies, a new one is started with the deadline it had; if that
 * is impossible the caller is told (`onUnguarded`) and must stop the command itself.
 */
export class DeadlineGuard {
  private proc: GuardLink | null = null;
  private deadlineMono: number;
  private fired: "fired_ended" | "fired_running" | null = null;
  private finished = false;
  private waiters: ((r: GuardReport) => void)[] = [];
  private replacements = 0;
  private spawnError: Error | null = null;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly pgid: number,
    private readonly leaderStart: string | null,
    private readonly graceMs: number,
    private readonly deadline: DeadlineSource,
    private readonly events: GuardEvents = {},
    /** A guard the gate already started (not armed yet), to use instead of spawning one. */
    launched: LaunchedGuard | null = null,
  ) {
    this.deadlineMono = readClock().mono + deadline.remainingMs();
    if (launched === null) this.spawnGuard();
    else {
      this.adopt(launched);
      // Armed before anything else is said to it, and before the gate opens (our caller).
      this.arm(deadline.remainingMs());
    }
    this.unsubscribe = deadline.onRenewed(() => this.arm(this.deadline.remainingMs()));
  }

  /** The guard's pid (tests kill it). */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get hasFired(): boolean {
    return this.fired !== null;
  }

  /** Moves the deadline to `remainingMs` from now. */
  arm(remainingMs: number): void {
    this.deadlineMono = readClock().mono + remainingMs;
    this.send(`arm ${Math.max(0, Math.floor(remainingMs))}`);
  }

  /** Stops the command now (TERM, KILL after the grace). False when no guard is running. */
  fire(): boolean {
    return this.send("fire");
  }

  /** Asks whether the deadline had passed; call once the command has exited. */
  status(timeoutMs = 2000): Promise<GuardReport> {
    if (this.fired !== null) return Promise.resolve(this.fired);
    if (this.proc === null || !this.send("query")) return Promise.resolve("unguarded");
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve("unguarded"), timeoutMs);
      this.waiters.push((r) => {
        clearTimeout(timer);
        resolve(r);
      });
    });
  }

  /** The command is over and what it left is dealt with: the guard exits, touching nothing. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.unsubscribe();
    this.send("done");
    (this.proc?.commands as Socket | undefined)?.end();
  }

  private send(line: string): boolean {
    const stdin = this.proc?.commands;
    if (!stdin || stdin.destroyed || !stdin.writable) return false;
    stdin.write(`${line}\n`);
    return true;
  }

  private spawnGuard(): void {
    const remaining = Math.max(0, Math.floor(this.deadlineMono - readClock().mono));
    const bash = bashPath() ?? "bash";
    const p = spawn(
      bash,
      [
        "-c",
        GUARD_SCRIPT,
        "quiesce-guard",
        String(this.pgid),
        this.leaderStart ?? "",
        String(this.graceMs),
        String(remaining),
      ],
      { detached: true, stdio: ["pipe", "pipe", "ignore"] },
    );
    const link: GuardLink = { pid: p.pid, commands: p.stdin };
    this.proc = link;
    p.stdin.on("error", () => undefined); // the guard is gone; 'close' below decides
    // The guard never keeps the holder alive: the command it watches does.
    p.unref();
    (p.stdin as Socket).unref();
    this.readLines(link, p.stdout);
    p.once("error", (e) => (this.spawnError = e)); // reported through 'close'
    p.once("close", (code, signal) =>
      this.onClose(link, signal ? `was killed by ${signal}` : `exited with code ${code}`),
    );
  }

  /** Takes over a guard the gate started; it is gone when its output closes. */
  private adopt(g: LaunchedGuard): void {
    const link: GuardLink = { pid: undefined, commands: g.commands };
    this.proc = link;
    (g.commands as Socket).unref?.();
    this.readLines(link, g.lines);
    g.lines.once("close", () => this.onClose(link, "is gone"));
  }

  private readLines(link: GuardLink, out: Readable): void {
    (out as Socket).unref?.();
    // Lines split here rather than by node:readline, which `quiesce run` would load for this
    // alone (about 1 ms of its start-up, bench/startup.ts).
    let pending = "";
    out.setEncoding("utf8").on("data", (chunk: string) => {
      const lines = (pending + chunk).split("\n");
      pending = lines.pop()!;
      for (const line of lines) {
        if (line.startsWith("ready ")) link.pid ??= Number(line.slice(6)) || undefined;
        else this.onLine(line);
      }
    });
  }

  private onLine(line: string): void {
    if (line === "armed") {
      for (const w of this.waiters.splice(0)) w("armed");
    } else if (line.startsWith("fired ")) {
      this.fired = line === "fired ended" ? "fired_ended" : "fired_running";
      for (const w of this.waiters.splice(0)) w(this.fired);
      this.events.onFired?.(this.fired === "fired_ended");
    }
  }

  private onClose(link: GuardLink, how: string): void {
    if (this.proc !== link) return;
    this.proc = null;
    for (const w of this.waiters.splice(0)) w(this.fired ?? "unguarded");
    if (this.finished || this.fired !== null) return;
    const why = `the deadline guard (pid ${link.pid ?? "?"}) ${how}`;
    if (this.spawnError !== null) {
      this.events.onUnguarded?.(`the deadline guard could not start: ${this.spawnError.message}`);
      return;
    }
    if (this.deadlineMono - readClock().mono <= 0) {
      this.events.onUnguarded?.(`${why} and the deadline has passed`);
      return;
    }
    // A guard that keeps dying is a broken machine, not a passing fault: stop replacing it.
    if (++this.replacements > MAX_REPLACEMENTS) {
      this.events.onUnguarded?.(`${why}, for the ${MAX_REPLACEMENTS + 1}th time`);
      return;
    }
    this.spawnGuard();
    this.events.onReplaced?.(
      `${why}; a new guard (pid ${this.proc!.pid ?? "?"}) keeps the deadline`,
    );
  }
}
