import type pg from "pg";
import { GroupCommit } from "../group-commit.js";
import type { FenceOutcome } from "../store.js";
import * as sql from "./pg-statements.js";

export interface ChildWrite {
  scope: string;
  token: number;
  childPid: number;
  childPidStart: string | null;
}

type Query = <R extends pg.QueryResultRow>(
  doing: string,
  text: string,
  params: unknown[],
) => Promise<R[]>;
type Refusal = (scope: string, token: number) => Promise<Extract<FenceOutcome, { ok: false }>>;

/**
 * setChild on PostgreSQL: the pids of commands started together (a wave's hosts) go in one
 * statement, each fenced by its own lease's token in the WHERE clause, and each caller waits
 * for the commit that holds its pid before its command may start (I8), as with a statement
 * each. Of a wave host's three lease round trips (acquire, the pid, the release with its final
 * state) this one is now shared; a lone `quiesce run` is a batch of one.
 */
export function childPids(q: Query, refusal: Refusal): GroupCommit<ChildWrite, FenceOutcome> {
  const one = async (w: ChildWrite): Promise<FenceOutcome> => {
    const rows = await q("record the command's pid", sql.SET_CHILD, [
      w.scope,
      w.token,
      w.childPid,
      w.childPidStart,
    ]);
    return rows.length === 1 ? { ok: true } : refusal(w.scope, w.token);
  };
  return new GroupCommit<ChildWrite, FenceOutcome>({
    apply: async (ws) => {
      // One row per scope in an UPDATE ... FROM: the same lease twice goes one by one, in the
      // order asked.
      if (ws.length === 1 || new Set(ws.map((w) => w.scope)).size < ws.length) {
        const out: FenceOutcome[] = [];
        for (const w of ws) out.push(await one(w));
        return out;
      }
      const rows = await q<{ scope: string }>("record the commands' pids", sql.SET_CHILDREN, [
        ws.map((w) => w.scope),
        ws.map((w) => w.token),
        ws.map((w) => w.childPid),
        ws.map((w) => w.childPidStart),
      ]);
      const written = new Set(rows.map((r) => r.scope));
      return Promise.all(
        ws.map((w) =>
          written.has(w.scope)
            ? Promise.resolve<FenceOutcome>({ ok: true })
            : refusal(w.scope, w.token),
        ),
      );
    },
  });
}
