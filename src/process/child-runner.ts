import { spawn, type ChildProcess, type StdioNull, type StdioPipe } from "node:child_process";
import type { Stream } from "node:stream";
import type { Writable } from "node:stream";
import { DeadlineGuard, type DeadlineSource, type GuardEvents } from "./deadline-guard.js";
import { processStartTime } from "./process-identity.js";
import { exitCodeOf, groupGone, groupMembers, signalGroup } from "./signals.js";

type Stdio = StdioNull | StdioPipe | "inherit" | number | Stream;

/** What to run: an executable with its arguments, or a `/bin/sh -c` command line. */
export type CommandSpec =
  | { file: string; args: readonly string[]; shell?: undefined }
  | { shell: string; file?: undefined };

export interface StartOptions {
  command: CommandSpec;
  env?: NodeJS.ProcessEnv;
  /** stdin, stdout, stderr as node's `spawn` takes them. */
  stdio: [Stdio, Stdio, Stdio];
  /**
   * Write-ahead (I8): the command waits behind a gate until `open()`; the caller records its
   * pid first. The gate is a shell that holds the pid, blocks on fd 3 and then execs the
   * command (same pid). If we die first, the read ends with EOF and nothing runs (exit 125).
   */
  gated?: boolean;
  /**
   * The lease the command runs under. A deadline guard (a separate process) then terminates
   * the command's whole group when the deadline passes, even if this process cannot (I11).
   */
  deadline?: { source: DeadlineSource; graceMs: number; events?: GuardEvents };
  /** The name the gate shell shows as $0 (ps). */
  name?: string;
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The shell convention: the code, or 128 + the signal's number. */
  exitCode: number;
}

const GATE_EXEC = 'read -r _ <&3 || exit 125; exec 3<&-; exec "$@"';
const GATE_SHELL = 'read -r _ <&3 || exit 125; exec 3<&-; exec /bin/sh -c "$1"';

/**
 * One child process leading a process group of its own, so that stopping it stops everything
 * it started (as long as that stays in the group: `setsid` and double-forking daemons leave
 * it). Every command quiesce runs goes through here: `run`'s command, a wave's patch, check
 * and health commands, probe and alert commands.
 */
export class GroupChild {
  readonly pid: number;
  /** The leader's start time (clock ticks since boot), to tell a reused pid apart. */
  readonly startTime: string | null;
  readonly exited: Promise<ChildExit>;
  readonly guard: DeadlineGuard | null;
  private gate: Writable | null;
  private done = false;

  private constructor(
    readonly process: ChildProcess,
    gate: Writable | null,
    private readonly deadline: StartOptions["deadline"],
  ) {
    this.pid = process.pid!;
    this.startTime = processStartTime(this.pid);
    this.gate = gate;
    this.exited = new Promise((resolve) =>
      process.once("exit", (code, signal) => {
        this.done = true;
        resolve({ code, signal, exitCode: exitCodeOf(code, signal) });
      }),
    );
    this.guard =
      deadline === undefined
        ? null
        : new DeadlineGuard(
            this.pid,
            this.startTime,
            deadline.graceMs,
            deadline.source,
            deadline.events,
          );
  }

  /** Spawns the command (behind its gate when `gated`); rejects when it cannot be started. */
  static start(o: StartOptions): Promise<GroupChild> {
    const env = o.env ?? process.env;
    const name = o.name ?? "quiesce-command";
    let file: string;
    let args: string[];
    const stdio: Stdio[] = [...o.stdio];
    if (o.gated) {
      stdio.push("pipe");
      file = "/bin/sh";
      args =
        o.command.shell !== undefined
          ? ["-c", GATE_SHELL, name, o.command.shell]
          : ["-c", GATE_EXEC, name, o.command.file, ...o.command.args];
    } else if (o.command.shell !== undefined) {
      file = "/bin/sh";
      args = ["-c", o.command.shell];
    } else {
      file = o.command.file;
      args = [...o.command.args];
    }
    return new Promise((resolve, reject) => {
      const child = spawn(file, args, { stdio, env, detached: process.platform !== "win32" });
      const gate = o.gated ? (child.stdio[3] as Writable) : null;
      gate?.on("error", () => undefined); // the shell died before the gate opened
      child.once("error", reject);
      child.once("spawn", () => {
        child.off("error", reject);
        child.on("error", () => undefined); // later errors (a failed kill) surface as 'exit'
        resolve(new GroupChild(child, gate, o.deadline));
      });
    });
  }

  /**
   * Lets a gated command start. Refuses (false) when the deadline has already passed: a
   * holder paused between recording the pid and this call must not start the command late.
   */
  open(): boolean {
    if (this.gate === null) return true;
    if (this.deadline !== undefined && this.deadline.source.remainingMs() <= 0) return false;
    this.gate.end("go\n");
    this.gate = null;
    return true;
  }

  get hasExited(): boolean {
    return this.done;
  }

  /** Signals the whole group. */
  signal(sig: NodeJS.Signals): void {
    signalGroup(this.pid, sig);
  }

  /**
   * TERM to the group, KILL after `graceMs` (the guard does it when there is one: it is the
   * one place that must work while we are not scheduled; our own timer is the fallback).
   * Resolves once the leader exited and the group is empty: the shell at the top may die of
   * TERM at once while a command under it still runs its TERM trap (a rollback), and keeps
   * the rest of its grace.
   */
  async terminate(graceMs: number): Promise<ChildExit> {
    const until = Date.now() + graceMs;
    if (this.guard?.fire() !== true) this.signal("SIGTERM");
    const kill = setTimeout(() => this.signal("SIGKILL"), graceMs);
    const exit = await this.exited;
    if (!(await groupGone(this.pid, until + 50))) {
      this.signal("SIGKILL");
      await groupGone(this.pid, Date.now() + 1000);
    }
    clearTimeout(kill);
    return exit;
  }

  /** Live processes left in the group after the leader exited. */
  leftovers(): number[] {
    return process.platform === "linux" ? groupMembers(this.pid) : [];
  }

  /**
   * Stops what the command left in its group: TERM, then KILL after `graceMs`. Resolves with
   * how many processes there were once none is left (bounded by the grace and a second).
   */
  async stopLeftovers(graceMs: number): Promise<number> {
    const left = this.leftovers();
    if (left.length === 0) return 0;
    this.signal("SIGTERM");
    if (!(await groupGone(this.pid, Date.now() + graceMs))) {
      this.signal("SIGKILL");
      await groupGone(this.pid, Date.now() + 1000);
    }
    return left.length;
  }

  /** Call once the command and what it left are over: the guard exits without acting. */
  finish(): void {
    this.guard?.finish();
  }
}
