import { spawn, type ChildProcess, type StdioNull, type StdioPipe } from "node:child_process";
import type { Readable, Stream, Writable } from "node:stream";
import {
  bashPath,
  DeadlineGuard,
  setsidPath,
  type DeadlineSource,
  type GuardEvents,
  type LaunchedGuard,
} from "./deadline-guard.js";
import { GUARD_SCRIPT } from "./guard-script.generated.js";
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
  /**
   * For a gated command whose lease is not taken yet (`quiesce run` spawns the gate first and
   * records its pid with the acquisition): the gate itself starts the deadline guard, at once,
   * outside the command's group and not as its child, not armed; `guardDeadline()` arms it
   * once the lease is held, before `open()`. The guard then costs this process no spawn of
   * its own (a fork of a large process: most of `quiesce run`'s spawning time). Ignored where
   * the gate cannot do it (no bash or setsid, not Linux): `guardDeadline()` spawns one.
   */
  launchGuard?: { graceMs: number };
  /**
   * The gate was spawned before the lease (`quiesce run`): the line that opens it, `open(token)`,
   * carries the fencing token, which it exports as QUIESCE_FENCING_TOKEN. Implied by
   * `launchGuard`, also where the gate cannot start the guard.
   */
  tokenAtOpen?: boolean;
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
/** GATE_EXEC for a gate spawned before the lease: the line that opens it is the token. */
const GATE_EXEC_TOKEN = [
  "read -r t _ <&3 || exit 125",
  "exec 3<&-",
  "QUIESCE_FENCING_TOKEN=$t",
  "export QUIESCE_FENCING_TOKEN",
  'exec "$@"',
].join("\n");
/**
 * GATE_EXEC_TOKEN that first starts the deadline guard ($1 setsid, $2 bash, $3 its script, $4
 * the grace), with the environment node gives its own guards (no QUIESCE_RUN_ID): in a session
 * of its own, so that a signal to the command's group does not reach it, and through a
 * subshell that exits at once, so that it is nobody's child here (a command that waits for all
 * its children must not wait for it). Its input is fd 4, its output fd 5, both closed here
 * after.
 */
const GATE_EXEC_GUARDED = [
  "s=$1 b=$2 g=$3 gr=$4; shift 4",
  // Not under the run: a takeover probe looking for the run's processes must not find it.
  "( unset QUIESCE_RUN_ID QUIESCE_LEASE_SCOPE QUIESCE_FENCING_TOKEN",
  '  "$s" "$b" -c "$g" quiesce-guard $$ - "$gr" - <&4 >&5 2>/dev/null 3<&- 4<&- 5>&- & )',
  "exec 4<&- 5>&-",
  GATE_EXEC_TOKEN,
].join("\n");

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
  private deadlineGuard: DeadlineGuard | null = null;
  private gate: Writable | null;
  private done = false;

  private constructor(
    readonly process: ChildProcess,
    gate: Writable | null,
    private deadline: StartOptions["deadline"],
    /** The guard the gate started (launchGuard), until guardDeadline() takes it. */
    private launched: LaunchedGuard | null,
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
    if (deadline !== undefined)
      this.guardDeadline(deadline.source, deadline.graceMs, deadline.events);
  }

  get guard(): DeadlineGuard | null {
    return this.deadlineGuard;
  }

  /**
   * Puts the command under a deadline: the guard the gate started is armed with it, or (none)
   * a guard is spawned. Call once, before `open()`.
   */
  guardDeadline(source: DeadlineSource, graceMs: number, events: GuardEvents = {}): void {
    this.deadline = { source, graceMs, events };
    this.deadlineGuard = new DeadlineGuard(
      this.pid,
      this.startTime,
      graceMs,
      source,
      events,
      this.launched,
    );
    this.launched = null;
  }

  /** Spawns the command (behind its gate when `gated`); rejects when it cannot be started. */
  static start(o: StartOptions): Promise<GroupChild> {
    const env = o.env ?? process.env;
    const name = o.name ?? "quiesce-command";
    let file: string;
    let args: string[];
    const stdio: Stdio[] = [...o.stdio];
    const exec = o.command.file !== undefined;
    const launcher = o.gated && exec ? guardLauncher(o.launchGuard) : null;
    if (o.gated) {
      // The gate: a shell that waits on fd 3 for the line that opens it (see GATE_EXEC).
      let gate: string;
      if (launcher !== null) gate = GATE_EXEC_GUARDED;
      else if (exec && (o.tokenAtOpen || o.launchGuard !== undefined)) gate = GATE_EXEC_TOKEN;
      else gate = exec ? GATE_EXEC : GATE_SHELL;
      stdio.push(
        ...(launcher !== null ? (["pipe", "pipe", "pipe"] as const) : (["pipe"] as const)),
      );
      file = "/bin/sh";
      args =
        o.command.shell !== undefined
          ? ["-c", gate, name, o.command.shell]
          : ["-c", gate, name, ...(launcher ?? []), o.command.file, ...o.command.args];
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
      const launched: LaunchedGuard | null = launcher === null ? null : guardPipes(child);
      child.once("error", reject);
      child.once("spawn", () => {
        child.off("error", reject);
        child.on("error", () => undefined); // later errors (a failed kill) surface as 'exit'
        resolve(new GroupChild(child, gate, o.deadline, launched));
      });
    });
  }

  /**
   * Lets a gated command start. Refuses (false) when the deadline has already passed: a
   * holder paused between recording the pid and this call must not start the command late.
   */
  open(token?: number): boolean {
    if (this.gate === null) return true;
    if (this.deadline !== undefined && this.deadline.source.remainingMs() <= 0) return false;
    this.gate.end(`${token ?? "go"}\n`);
    this.gate = null;
    return true;
  }

  /** Ends a gate that never opened: its shell exits 125 (and a guard it started, unarmed, too). */
  async close(): Promise<void> {
    this.gate?.end();
    this.gate = null;
    this.launched?.commands.end();
    this.launched?.lines.destroy();
    this.launched = null;
    await this.exited;
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

/** The gate's arguments that start a guard ($1..$4 of GATE_EXEC_GUARDED), or null: it cannot. */
function guardLauncher(o: StartOptions["launchGuard"]): string[] | null {
  if (o === undefined || process.platform !== "linux") return null;
  const setsid = setsidPath();
  const bash = bashPath();
  if (setsid === null || bash === null) return null;
  return [setsid, bash, GUARD_SCRIPT, String(o.graceMs)];
}

/** Our ends of the launched guard's input (fd 4) and output (fd 5). */
function guardPipes(child: ChildProcess): LaunchedGuard {
  const pipes = child.stdio as unknown as (Readable | Writable)[];
  const g = { commands: pipes[4] as Writable, lines: pipes[5] as Readable };
  // A guard that died is seen by its output closing (DeadlineGuard), never by an error.
  g.commands.on("error", () => undefined);
  g.lines.on("error", () => undefined);
  return g;
}
