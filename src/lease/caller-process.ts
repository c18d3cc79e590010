import { readFileSync } from "node:fs";
import { basename } from "node:path";

/**
 * The process a lease held across commands belongs to when `quiesce lock acquire` is called
 * from a script: the script's shell, i.e. our parent (`token=$(quiesce lock acquire ...)`
 * runs the command directly in the shell's own process under bash and dash). Recording it
 * makes a crashed script's lease provably dead on this host (its pid gone or reused), so a
 * later acquisition takes it over instead of waiting for a human.
 *
 * Launchers in between (`npx quiesce`, `npm exec`) exit at once, so they are skipped: the
 * owner would otherwise look dead while the script still runs. Init (pid 1) never dies and
 * proves nothing: null then. Linux /proc; elsewhere the parent as it is.
 */
export function callingProcess(ppid = process.ppid): number | null {
  let pid = ppid;
  for (let depth = 0; depth < 8 && pid > 1; depth++) {
    const argv = commandLine(pid);
    if (argv === null || !isLauncher(argv)) break;
    const parent = parentOf(pid);
    if (parent === null) break;
    pid = parent;
  }
  return pid > 1 ? pid : null;
}

/** npm, npx, and the `sh -c` npm runs a bin through. */
function isLauncher(argv: readonly string[]): boolean {
  const names = argv.slice(0, 2).map((a) => basename(a));
  if (names.some((n) => n === "npm" || n === "npx" || /^np[mx]-cli\.js$/.test(n))) return true;
  return (
    (names[0] === "sh" || names[0] === "bash" || names[0] === "dash") &&
    argv[1] === "-c" &&
    process.env.npm_command !== undefined &&
    /(^|\/|\s)quiesce(\s|$)/.test(argv[2] ?? "")
  );
}

function commandLine(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return null;
  }
}

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(ppid) ? ppid : null;
  } catch {
    return null;
  }
}
