/**
 * Lock idioms in shell scripts, crontabs and systemd units (`quiesce audit`): the home-made
 * locks a lease replaces. Pure: the scanner passes a file's text; each finding names the line,
 * the idiom and the `quiesce run --lease SCOPE -- CMD` line that replaces it.
 */
export const Idiom = {
  TOUCH: "touch",
  MKDIR: "mkdir",
  TEST: "test -e",
  RM: "rm -f",
  ECHO_PID: "echo $$ >",
  FLOCK: "flock",
  LOCKFILE: "lockfile",
} as const;
export type Idiom = (typeof Idiom)[keyof typeof Idiom];

/** How a file is read: a script is wrapped as a whole; a crontab line and a unit's ExecStart
 * are what `quiesce run` wraps. A system crontab (/etc/cron.d) has a user field. */
export type IdiomFileKind = "script" | "crontab" | "user-crontab" | "unit";

export interface IdiomFinding {
  line: number;
  idiom: Idiom;
  /** The lock path the idiom names, when the line (or an `exec N>PATH` earlier) says it. */
  lockPath: string | null;
  suggestion: string;
}

const LOCKISH = /lock|lck|\.pid\b|\.flag\b|maintenance/i;
const ARG = String.raw`((?:"[^"]*"|'[^']*'|[^\s;&|)\]])+)`;
const OPTS = String.raw`(?:-\S+\s+)*`;

/** Each idiom with the pattern that finds it; group 1 is the lock path when there is one. */
const PATTERNS: readonly { idiom: Idiom; re: RegExp; needsLockish: boolean }[] = [
  { idiom: Idiom.TOUCH, re: new RegExp(String.raw`\btouch\s+${OPTS}${ARG}`), needsLockish: true },
  { idiom: Idiom.MKDIR, re: new RegExp(String.raw`\bmkdir\s+${OPTS}${ARG}`), needsLockish: true },
  {
    idiom: Idiom.TEST,
    re: new RegExp(String.raw`(?:\[\[?|\btest)\s+!?\s*-[efdsL]\s+${ARG}`),
    needsLockish: true,
  },
  { idiom: Idiom.RM, re: new RegExp(String.raw`\brm\s+${OPTS}${ARG}`), needsLockish: true },
  {
    idiom: Idiom.ECHO_PID,
    re: new RegExp(String.raw`\b(?:echo|printf)\s+(?:"?%s\\?n?"?\s+)?"?\$\$"?\s*>>?\s*${ARG}`),
    needsLockish: false,
  },
  { idiom: Idiom.FLOCK, re: /(?:^|[\s;&|(`=/])flock\s+(.*)$/, needsLockish: false },
  { idiom: Idiom.LOCKFILE, re: /(?:^|[\s;&|(`=/])lockfile\s+(.*)$/, needsLockish: false },
];

export function findIdioms(text: string, file: string, kind: IdiomFileKind): IdiomFinding[] {
  const lines = text.split("\n");
  const fds = fdPaths(lines);
  const execStart = kind === "unit" ? unitExecStart(lines) : null;
  const out: IdiomFinding[] = [];
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) return;
    if (kind === "unit" && !/^Exec[A-Za-z]*=/.test(line)) return;
    for (const p of PATTERNS) {
      const m = p.re.exec(line);
      if (!m) continue;
      let lockPath = m[1] === undefined ? null : unquote(m[1]);
      let command: string | null = null;
      if (p.idiom === Idiom.FLOCK || p.idiom === Idiom.LOCKFILE) {
        const parsed = splitLockCommand(m[1] ?? "", p.idiom);
        const fdPath = parsed.path === null ? undefined : fds.get(parsed.path);
        lockPath = fdPath ?? parsed.path;
        // `flock -n 9 || exit 1` locks the script's own fd: the script is what gets wrapped.
        command = fdPath === undefined ? parsed.command : null;
      }
      if (p.needsLockish && (lockPath === null || !LOCKISH.test(baseName(lockPath)))) continue;
      const cmd = command ?? wrapped(kind, line, file, execStart);
      out.push({
        line: i + 1,
        idiom: p.idiom,
        lockPath,
        suggestion: `quiesce run --lease ${scopeFor(lockPath, file)} -- ${cmd}`,
      });
    }
  });
  return out;
}

/** What `quiesce run` wraps: the crontab line's command, the unit's ExecStart, the script. */
function wrapped(kind: IdiomFileKind, line: string, file: string, execStart: string | null) {
  if (kind === "unit") return execStart ?? line.replace(/^Exec[A-Za-z]*=[-@:+!]*/, "");
  if (kind === "script") return file;
  const f = line.split(/\s+/);
  const skip = (f[0]?.startsWith("@") ? 1 : 5) + (kind === "crontab" ? 1 : 0);
  return f.slice(skip).join(" ") || line;
}

function unitExecStart(lines: readonly string[]): string | null {
  for (const l of lines) {
    const m = /^\s*ExecStart=[-@:+!]*(.*)$/.exec(l);
    if (m && m[1]!.trim() !== "") return m[1]!.trim();
  }
  return null;
}

/** `exec 9>/var/lock/x.lock` (or `9>PATH` anywhere) so that `flock -n 9` names its file. */
function fdPaths(lines: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const l of lines)
    for (const m of l.matchAll(/(?:^|\s)(\d{1,2})>>?\s*("[^"]*"|'[^']*'|[^\s;&|)]+)/g))
      out.set(m[1]!, unquote(m[2]!));
  return out;
}

/** Options of flock(1) and lockfile(1) that take a value. */
const VALUE_OPTS = new Set([
  "-w",
  "--wait",
  "--timeout",
  "-E",
  "--conflict-exit-code",
  "-r",
  "-l",
  "-s",
]);

/** `flock -n -w 5 /var/lock/x.lock cmd args` -> the path and the command after it. */
function splitLockCommand(
  rest: string,
  idiom: Idiom,
): { path: string | null; command: string | null } {
  const t = rest
    .trim()
    .split(/\s+/)
    .filter((x) => x !== "");
  let i = 0;
  while (i < t.length && t[i]!.startsWith("-") && !/^-\d+$/.test(t[i]!)) {
    if (VALUE_OPTS.has(t[i]!)) i++;
    i++;
  }
  const path = t[i] === undefined ? null : unquote(t[i]!);
  let tail = t.slice(i + 1);
  const end = tail.findIndex((x) => SHELL_OPERATORS.has(x));
  if (end >= 0) tail = tail.slice(0, end);
  if (tail[0] === "-c" || tail[0] === "--command") tail = tail.slice(1);
  const command = idiom === Idiom.FLOCK && tail.length > 0 ? unquote(tail.join(" ")) : null;
  return { path, command };
}

const SHELL_OPERATORS = new Set(["||", "&&", ";", "|", "&"]);

function baseName(p: string): string {
  return (
    p
      .split("/")
      .filter((x) => x !== "")
      .pop() ?? ""
  );
}

function unquote(s: string): string {
  return s.replace(/^(["'])(.*)\1$/, "$2");
}

/**
 * A scope named after the lock (`/var/lock/backup.lock` -> `backup`), else after the file
 * (a lock held by an fd or a variable). Kept to the characters a scope allows.
 */
export function scopeFor(lockPath: string | null, file: string): string {
  const base = baseName;
  const fromLock =
    lockPath !== null && !/[$`]/.test(lockPath) && !/^\d+$/.test(lockPath)
      ? base(lockPath).replace(/\.(lock|lck|pid|flag)$/i, "")
      : "";
  const name = fromLock !== "" ? fromLock : base(file).replace(/\.[A-Za-z0-9]+$/, "");
  const clean = name
    .replace(/[^A-Za-z0-9._:/@+=-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, 200);
  return clean === "" ? "legacy" : clean;
}
