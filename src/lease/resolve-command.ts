import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";

/**
 * Finds the executable `quiesce run` will start, the way a shell would (PATH for a bare name),
 * so that "not found" (127) and "not executable" (126) are reported before the lease is used,
 * in our words rather than a shell's.
 */
export function resolveExecutable(command: string, env: NodeJS.ProcessEnv): string {
  if (command === "") throw failure("ENOENT", "the command is empty");
  if (command.includes("/")) return check(isAbsolute(command) ? command : resolve(command));
  // A PATH entry that does not hold the name is skipped without an exception: a thrown ENOENT
  // costs its stack trace, and `quiesce run true` paid some 0.4 ms for each of eight entries
  // (bench/startup.ts). One that is there but cannot run is passed over too, as before.
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, command);
    if (statSync(candidate, { throwIfNoEntry: false }) === undefined) continue;
    try {
      return check(candidate);
    } catch {
      /* keep looking */
    }
  }
  throw failure("ENOENT", "not found in PATH");
}

function check(path: string): string {
  const st = statSync(path, { throwIfNoEntry: false });
  if (st === undefined) throw failure("ENOENT", "no such file");
  if (st.isDirectory()) throw failure("EACCES", "it is a directory");
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw failure("EACCES", "permission denied (not executable)");
  }
  return path;
}

function failure(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}
