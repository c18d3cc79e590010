import type pg from "pg";
import { GroupCommit } from "../group-commit.js";
import * as sql from "./pg-statements.js";

/** ACQUIRE's parameters, $1..$16, for one acquisition. */
export type AcquireParams = readonly unknown[];

type Query = <R extends pg.QueryResultRow>(
  doing: string,
  text: string,
  params: unknown[],
) => Promise<R[]>;

/**
 * Acquisitions on PostgreSQL that meet in this process (made while another was being sent or
 * was in flight: a wave's hosts starting together) go in one statement, ACQUIRE_MANY, one
 * commit for all, each decided as ACQUIRE alone would decide it; each caller gets its own row
 * once that commit returned. A lone acquisition is ACQUIRE itself. The same scope asked twice
 * in one batch goes in two statements, in the order asked (an upsert may not touch a row twice).
 * Of a wave host's lease round trips this was the last one of its own (see childPids).
 */
export function acquisitions<R extends pg.QueryResultRow>(q: Query): GroupCommit<AcquireParams, R> {
  const one = async (params: AcquireParams): Promise<R> => {
    const [row] = await againAfterInsertRace(() =>
      q<R>("acquire a lease", sql.ACQUIRE, [...params]),
    );
    return row!;
  };
  const many = async (batch: readonly AcquireParams[]): Promise<R[]> => {
    const columns = batch[0]!.map((_, i) => batch.map((p) => p[i]));
    const rows = await againAfterInsertRace(() =>
      q<R & { ord: string }>("acquire leases", sql.ACQUIRE_MANY, columns),
    );
    const byOrd = new Map(rows.map((r) => [Number(r.ord), r]));
    return batch.map((_, i) => {
      const r = byOrd.get(i + 1);
      if (r === undefined) throw new Error(`acquire leases: no answer for acquisition ${i + 1}`);
      return r;
    });
  };
  return new GroupCommit<AcquireParams, R>({
    apply: async (batch) => {
      // The k-th acquisition of a scope in this batch goes in the k-th statement.
      const rounds: number[][] = [];
      const seen = new Map<unknown, number>();
      batch.forEach((p, i) => {
        const k = seen.get(p[0]) ?? 0;
        seen.set(p[0], k + 1);
        (rounds[k] ??= []).push(i);
      });
      const out: R[] = new Array<R>(batch.length);
      for (const round of rounds) {
        const rows =
          round.length === 1
            ? [await one(batch[round[0]!]!)]
            : await many(round.map((i) => batch[i]!));
        round.forEach((i, j) => (out[i] = rows[j]!));
      }
      return out;
    },
  });
}

/** How many times a statement that lost the insert race below is sent; one more always does. */
const INSERT_RACE_ATTEMPTS = 3;

/**
 * The first acquisitions of a new scope, sent at once from separate connections, each insert
 * its lease row. ON CONFLICT's arbiter is the primary key, where the loser is meant to turn
 * into the UPDATE that refuses it (the row is held), but quiesce_leases_fence (migration 0007,
 * unique on scope, token and held) is a second unique index, which PostgreSQL checks without
 * arbitration: when both inserts passed ON CONFLICT's first check before either was in the
 * index, the loser fails with a unique violation on it once the winner commits. That
 * statement changed nothing (it is its own transaction); sent again, it finds the winner's
 * row and decides as ACQUIRE always does, a refusal or a place in line.
 */
async function againAfterInsertRace<T>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (e) {
      if (attempt >= INSERT_RACE_ATTEMPTS || !lostInsertRace(e)) throw e;
    }
  }
}

function lostInsertRace(e: unknown): boolean {
  const cause = (e as { cause?: { code?: unknown; constraint?: unknown } }).cause ?? e;
  const pgErr = cause as { code?: unknown; constraint?: unknown };
  return pgErr.code === "23505" && pgErr.constraint === "quiesce_leases_fence";
}
