/**
 * The one stop-signal policy every long-running command follows (graphile-worker's main.ts
 * does the same): the first SIGINT/SIGTERM/SIGHUP starts a graceful stop, a second one forces
 * it, and a forced stop arms an unref'd watchdog that ends the process if recording and
 * releasing hang. An uncaught exception or unhandled rejection (a bug of ours) is a forced
 * stop too, so that what is held is still recorded and released.
 *
 * One process-wide dispatcher owns the `uncaughtException` listener: the innermost active
 * policy gets the error, and when none is active the CLI's fallback (one line, exit 1) does.
 */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

export interface StopPolicy {
  /** The first signal: stop gracefully. */
  graceful(sig: NodeJS.Signals): void;
  /** Every further signal: stop now. */
  forceful(sig: NodeJS.Signals, count: number): void;
  /** An uncaught error in this process; absent: the fallback handles it. */
  fatal?(error: Error): void;
  /**
   * After a forced stop (second signal or fatal error), exit with this code if the process is
   * still alive after `ms`: what is held then expires on its own.
   */
  watchdog?: { ms: number; exitCode: (cause: "signal" | "fatal") => number };
}

const active: StopPolicy[] = [];
/** Without the CLI's fallback (a library user): Node's own behaviour, unless they listen. */
let fallback: (error: Error) => void = (e) => {
  if (process.listenerCount("uncaughtException") > 1) return;
  process.stderr.write(`${e.stack ?? e.message}\n`);
  process.exit(1);
};
let installed = false;

/** What handles an uncaught error when no policy is active (the CLI: one line, exit 1). */
export function setFatalFallback(fn: (error: Error) => void): void {
  fallback = fn;
  install();
}

function install(): void {
  if (installed) return;
  installed = true;
  const onFatal = (e: unknown) => {
    const error = e instanceof Error ? e : new Error(String(e));
    const handler = [...active].reverse().find((p) => p.fatal !== undefined);
    if (handler === undefined) return fallback(error);
    armWatchdog(handler, "fatal");
    handler.fatal!(error);
  };
  process.on("uncaughtException", onFatal);
  process.on("unhandledRejection", onFatal);
}

function armWatchdog(p: StopPolicy, cause: "signal" | "fatal"): void {
  if (p.watchdog === undefined) return;
  const code = p.watchdog.exitCode(cause);
  setTimeout(() => process.exit(code), p.watchdog.ms).unref();
}

/** Follows `policy` until the returned function is called (idempotent). */
export function onStopSignals(policy: StopPolicy): () => void {
  install();
  let seen = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    seen++;
    if (seen === 1) return policy.graceful(sig);
    if (seen === 2) armWatchdog(policy, "signal");
    policy.forceful(sig, seen);
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  active.push(policy);
  let disposed = false;
  return () => {
    if (disposed) return;
    disposed = true;
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
    const i = active.lastIndexOf(policy);
    if (i !== -1) active.splice(i, 1);
  };
}
