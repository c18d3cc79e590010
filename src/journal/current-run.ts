import { AsyncLocalStorage } from "node:async_hooks";
import { invalidInput } from "../domain/errors.js";
import type { Run } from "./run.js";

const current = new AsyncLocalStorage<Run>();

/**
 * Runs `fn` with `run` as the current run: every journaled tool, MCP call, fetch or browser
 * effect made inside it (however deep, across awaits) is journaled in `run`, so an agent loop
 * does not thread the run through each call.
 *
 *     await withRun(run, () => generateText({ model, tools, prompt }));
 */
export function withRun<T>(run: Run, fn: () => T): T {
  return current.run(run, fn);
}

/** The run set by the innermost withRun, or undefined outside of one. */
export function currentRun(): Run | undefined {
  return current.getStore();
}

/** A run given explicitly (a Run or a function returning one) or else the current run. */
export type RunBinding = Run | (() => Run | undefined);

/** The run a journaled call belongs to: the explicit binding first, else the current run. */
export function resolveRun(binding: RunBinding | undefined, what: string): Run {
  const run = typeof binding === "function" ? binding() : (binding ?? current.getStore());
  if (!run)
    throw invalidInput(
      `${what}: no run to journal it in; call it inside withRun(run, ...) or pass { run }`,
    );
  return run;
}
