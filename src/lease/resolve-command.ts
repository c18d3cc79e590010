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
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, command);
    try {
      return check(candidate);
    } catch {
      /* keep looking */
    }
  }
  throw failure("ENOENT", "not found in PATH");
}

function check(path: string): string {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw failure("ENOENT", "no such file");
  }
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
