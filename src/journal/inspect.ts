import { hostname, userInfo } from "node:os";
import { effectProblem, runProblems } from "../domain/journal-record.js";
import type { RunSnapshot } from "../store/journal-store.js";

/** A run as `runs show --json` prints it: times as ISO strings, each effect with its validation. */
export function describeRun(snap: RunSnapshot) {
  const iso = (ms: number) => new Date(ms).toISOString();
  const r = snap.run;
  return {
    run: { ...r, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt) },
    valid: runProblems(r, snap.effects).length === 0,
    effects: snap.effects.map((e) => {
      const problem = effectProblem(e, r.seq);
      return {
        ...e,
        createdAt: iso(e.createdAt),
        updatedAt: iso(e.updatedAt),
        valid: problem === null,
        problem,
      };
    }),
    storeNow: iso(snap.now),
  };
}

/** `user@host`: who resolved or requested something, when nobody said. */
export function operatorName(): string {
  let user = process.env.SUDO_USER || process.env.USER || "";
  if (!user) {
    try {
      user = userInfo().username;
    } catch {
      user = "unknown";
    }
  }
  return `${user}@${hostname()}`;
}
