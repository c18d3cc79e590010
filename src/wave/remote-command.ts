import { REMOTE_GUARD_SCRIPT } from "../process/guard-script.generated.js";
import { shellQuote } from "../process/shell-quote.js";

/**
 * `wave run --via 'ssh {host}'`: the patch, check and health commands run on the host itself,
 * through the `--via` command, under the remote guard (src/process/remote-guard.sh). The guard
 * ends a patch on the host when the host lease's deadline passes, even when the agent that
 * started it is cut off or dead; the agent moves that deadline with `arm MS` lines written to
 * the via command's standard input (ssh carries them to the guard).
 *
 * The line is quoted twice: once for the remote shell that runs the guard, once for the local
 * `sh -c` that runs the via command.
 */
export type RemoteMode =
  | { mode: "run"; key: string; deadlineMs: number; graceMs: number }
  | { mode: "check"; key: string };

/** The exit code of a remote check while the patch it asks about still runs. */
export const REMOTE_IN_PROGRESS = 3;

export function remoteCommandLine(via: string, command: string, m: RemoteMode): string {
  const words =
    m.mode === "run"
      ? ["run", m.key, String(Math.max(0, Math.floor(m.deadlineMs))), String(m.graceMs), command]
      : ["check", m.key, command];
  const remote = [
    "bash",
    "-c",
    shellQuote(REMOTE_GUARD_SCRIPT),
    "quiesce-remote-guard",
    ...words.map(shellQuote),
  ].join(" ");
  return `${via} ${shellQuote(remote)}`;
}
