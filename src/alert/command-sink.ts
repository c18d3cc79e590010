import type { ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import type { Alert } from "../domain/alert.js";
import { formatDuration } from "../domain/duration.js";
import { GroupChild } from "../process/child-runner.js";
import { abortReason, type AlertSink, nextTurn, serializeAlert } from "./alert-sink.js";

export const COMMAND_DEFAULTS = { timeoutMs: 10_000 } as const;
/** How much of the command's stderr a failure message quotes. */
const STDERR_TAIL = 300;
/** How long stderr may stay open after the command exits (see 'exit' below). */
const DRAIN_MS = 500;

export interface CommandSinkOptions {
  /** Run by `sh -c`, so pipes and redirections work as they do in a shell. */
  command: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * `--alert-cmd`: runs the command with the alert as one JSON line on stdin, and the kind,
 * severity and scope also in QUIESCE_ALERT_* (enough for a script without a JSON parser).
 * Exit 0 is delivered; a non-zero exit, a signal or the timeout is a failure that quotes the
 * end of its stderr. The command leads its own process group so that a timeout or an abort
 * kills what it started too (`sh -c 'curl ...'` forks), not only the shell.
 */
export function createCommandSink(options: CommandSinkOptions): AlertSink {
  const timeoutMs = options.timeoutMs ?? COMMAND_DEFAULTS.timeoutMs;
  return {
    name: "command",
    async send(alert: Alert, signal: AbortSignal): Promise<void> {
      await nextTurn();
      if (signal.aborted) throw abortReason(signal);
      const started = await GroupChild.start({
        command: { shell: options.command },
        stdio: ["pipe", "ignore", "pipe"],
        env: {
          ...(options.env ?? process.env),
          QUIESCE_ALERT_KIND: alert.kind,
          QUIESCE_ALERT_SEVERITY: alert.severity,
          QUIESCE_ALERT_SCOPE: alert.scope ?? "",
        },
      }).catch((e: Error) => {
        throw new Error(`alert command could not be started: ${e.message}`);
      });
      const child = started.process as ChildProcessByStdio<Writable, null, Readable>;
      return new Promise<void>((resolve, reject) => {
        let stderr = "";
        let timedOut = false;
        const killGroup = () => started.signal("SIGKILL");
        const timer = setTimeout(() => {
          timedOut = true;
          killGroup();
        }, timeoutMs);
        signal.addEventListener("abort", killGroup, { once: true });
        let drain: NodeJS.Timeout | undefined;
        const done = () => {
          clearTimeout(timer);
          clearTimeout(drain);
          signal.removeEventListener("abort", killGroup);
        };
        child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4096)));
        // A command that ignores its stdin closes the pipe early (EPIPE): not our failure.
        child.stdin.on("error", () => undefined);
        child.stdin.end(`${serializeAlert(alert)}\n`);
        // 'close' waits for the pipes, so the stderr quoted below is complete. A background job
        // the command left behind (`notify &`) may hold stderr open: stop reading shortly after
        // the shell itself exits rather than wait for it.
        child.once("exit", () => {
          drain = setTimeout(() => child.stderr.destroy(), DRAIN_MS);
        });
        child.once("close", (code, sig) => {
          done();
          if (signal.aborted) return reject(abortReason(signal));
          if (timedOut) {
            return reject(
              new Error(
                `alert command timed out after ${formatDuration(timeoutMs)} and was killed`,
              ),
            );
          }
          if (code === 0) return resolve();
          const how = code !== null ? `exited with code ${code}` : `was killed by ${sig}`;
          const tail = stderr.trim().replace(/\s+/g, " ").slice(-STDERR_TAIL);
          reject(new Error(`alert command ${how}${tail ? `: ${tail}` : ""}`));
        });
      });
    },
  };
}
