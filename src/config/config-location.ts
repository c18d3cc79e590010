import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { ErrorCode, invalidInput, QuiesceError } from "../domain/errors.js";
import { type ConfigFile, parseConfigText } from "./config-file.js";

export interface ConfigLocation {
  path: string;
  /** Named by --config or QUIESCE_CONFIG: it must exist. The default location may not. */
  explicit: boolean;
  /** What named it, for error messages: `--config`, `QUIESCE_CONFIG` or `default`. */
  source: "--config" | "QUIESCE_CONFIG" | "default";
}

/**
 * Where quiesce.yaml is looked for: --config, else QUIESCE_CONFIG, else the system file for
 * root (it configures every agent on the host) or the XDG per-user file. Pure: the
 * environment and uid are parameters.
 */
export function configLocation(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  uid = process.getuid?.() ?? -1,
): ConfigLocation {
  if (flag !== undefined) {
    if (flag.trim() === "") throw invalidInput("--config: the path is empty");
    return { path: flag, explicit: true, source: "--config" };
  }
  // An empty variable is unset, as for QUIESCE_STORE: `QUIESCE_CONFIG= quiesce ...` works.
  if (env.QUIESCE_CONFIG)
    return { path: env.QUIESCE_CONFIG, explicit: true, source: "QUIESCE_CONFIG" };
  if (uid === 0) return { path: "/etc/quiesce/quiesce.yaml", explicit: false, source: "default" };
  // XDG: a relative XDG_CONFIG_HOME (or HOME) is invalid and ignored.
  const home = env.HOME && env.HOME.startsWith("/") ? env.HOME : homedir();
  const base =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith("/")
      ? env.XDG_CONFIG_HOME
      : join(home, ".config");
  return { path: join(base, "quiesce", "quiesce.yaml"), explicit: false, source: "default" };
}

export interface LoadedConfig {
  path: string;
  file: ConfigFile;
}

export type ReadText = (path: string) => string;
const readUtf8: ReadText = (path) => readFileSync(path, "utf8");

/** Absent (for the default location only) is not an error; these are absent. */
const ABSENT = new Set(["ENOENT", "ENOTDIR"]);
const READ_PROBLEM: Record<string, string> = {
  ENOENT: "does not exist",
  ENOTDIR: "does not exist",
  EACCES: "cannot be read (permission denied)",
  EISDIR: "is a directory, not a config file",
};

/**
 * Reads and validates the file at `location`. Returns null when the default file does not
 * exist; a named file that does not exist, or any file that exists but cannot be read or is
 * invalid, is an INVALID_INPUT error naming it: a config the operator wrote is never
 * silently skipped.
 */
export function loadConfigFile(
  location: ConfigLocation,
  read: ReadText = readUtf8,
): LoadedConfig | null {
  let text: string;
  try {
    text = read(location.path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "";
    if (!location.explicit && ABSENT.has(code)) return null;
    const problem = READ_PROBLEM[code] ?? `cannot be read (${(e as Error).message})`;
    const subject = location.explicit ? `${location.source}: ${location.path}` : location.path;
    throw new QuiesceError(ErrorCode.INVALID_INPUT, `${subject} ${problem}`, {
      cause: e,
      details: { path: location.path },
    });
  }
  return { path: location.path, file: parseConfigText(text, location.path) };
}
