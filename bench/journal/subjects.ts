import Database from "better-sqlite3";
import pg from "pg";
import { pgClientConfig } from "../lib/bench-env.js";
import { EffectState } from "../../src/domain/effect-state.js";
import { contentOf, sealEffect, type EffectContent } from "../../src/domain/journal-record.js";
import { Journal } from "../../src/journal/journal.js";
import type { Provider } from "../../src/journal/provider.js";
import type { Run } from "../../src/journal/run.js";
import { Leases } from "../../src/lease/leases.js";
import { WRITE_EFFECT, CREATE_RUN } from "../../src/store/postgres/pg-journal-statements.js";
import { openStore } from "../../src/store/open-store.js";
import type { JournalWrite } from "../../src/store/journal-store.js";
import { prepareJournalStatements } from "../../src/store/sqlite/journal-statements.js";

/** A provider that does nothing and answers at once: what is measured is the journal. */
const noop: Provider = {
  name: "noop",
  capabilities: { idempotencyKey: true, statusLookup: false },
  dispatch: (r) => Promise.resolve({ requestId: `req-${r.key}`, result: null }),
};

export interface Subject {
  /** One effect through all four states in `run`. */
  effect(run: number): Promise<void>;
  /** Commits made so far (ours: group commits; raw: transactions). */
  commits(): number;
  close(): Promise<void>;
}

/** Ours: the library, `runs` runs on one runtime lease, one group commit. */
export async function oursSubject(url: string, runs: number, tag: string): Promise<Subject> {
  const store = await openStore(url);
  const leases = new Leases(store, { takeover: { auto: false } });
  const lease = await leases.acquire(`runtime:${tag}`, { ttl: "60s" });
  const journal = new Journal(store, lease, { runtimeId: tag, providers: [noop] });
  const rs: Run[] = [];
  for (let i = 0; i < runs; i++) rs.push(await journal.createRun({ runId: `${tag}-run-${i}` }));
  const n = new Array<number>(runs).fill(0);
  return {
    effect: async (i) => {
      await rs[i]!.effect({ key: `e-${n[i]!++}`, provider: "noop", request: { i } });
    },
    commits: () => journal.writer.commits,
    close: () => leases.close(),
  };
}

/** The four writes of one effect, as the journal builds them (sealed records, run sequence). */
export function effectWrites(
  runId: string,
  token: number,
  seq: number,
  key: string,
): JournalWrite[] {
  const base: EffectContent = {
    runId,
    key,
    ordinal: seq / 4,
    provider: "noop",
    state: EffectState.PLANNED,
    prevState: null,
    seq: seq + 1,
    attempt: 0,
    token,
    request: "{}",
    requestId: null,
    result: null,
    context: null,
    reviewReason: null,
  };
  const out: JournalWrite[] = [];
  let cur = sealEffect(base);
  out.push({
    kind: "effect",
    token,
    runId,
    expectedSeq: seq,
    seq: seq + 1,
    from: null,
    effect: cur,
  });
  const steps: [EffectState, Partial<EffectContent>][] = [
    [EffectState.DISPATCHED, { attempt: 1 }],
    [EffectState.ACKNOWLEDGED, { requestId: `req-${key}`, result: "null" }],
    [EffectState.OBSERVED, {}],
  ];
  for (const [to, patch] of steps) {
    const next = sealEffect({
      ...contentOf(cur),
      ...patch,
      state: to,
      prevState: cur.state,
      seq: cur.seq + 1,
    });
    out.push({
      kind: "effect",
      token,
      runId,
      expectedSeq: cur.seq,
      seq: next.seq,
      from: cur.state,
      effect: next,
    });
    cur = next;
  }
  return out;
}

/**
 * Raw SQL on SQLite: the journal's own prepared statements on a bare better-sqlite3
 * connection with the same pragmas, the same check-then-write inside BEGIN IMMEDIATE, one
 * transaction per transition (`batch` runs' transitions per transaction when batching).
 */
export function rawSqliteSubject(path: string, runs: number, tag: string): Subject {
  const db = new Database(path, { fileMustExist: true, timeout: 10_000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  const q = prepareJournalStatements(db);
  const now = Date.now();
  const token = 1;
  db.prepare(
    `INSERT INTO quiesce_leases (scope, token, held, ttl_ms, acquired_at, heartbeat_at, expires_at, expiry_reported)
     VALUES (?, ?, 1, 3600000, ?, ?, ?, 0) ON CONFLICT (scope) DO NOTHING`,
  ).run(`runtime:${tag}`, token, now, now, now + 3_600_000);
  const seq = new Array<number>(runs).fill(0);
  for (let i = 0; i < runs; i++)
    q.insertRun.run({
      run_id: `${tag}-run-${i}`,
      runtime_id: tag,
      scope: `runtime:${tag}`,
      token,
      checkpoint: null,
      now,
    });
  let commits = 0;
  const one = (w: Extract<JournalWrite, { kind: "effect" }>, t: number) => {
    q.getLease.get(`runtime:${tag}`);
    q.getRun.get(w.runId);
    const e = w.effect;
    const params = {
      run_id: e.runId,
      key: e.key,
      ordinal: e.ordinal,
      provider: e.provider,
      state: e.state,
      prev_state: e.prevState,
      seq: e.seq,
      attempt: e.attempt,
      token: e.token,
      request: e.request,
      request_id: e.requestId,
      result: e.result,
      context: e.context,
      review_reason: e.reviewReason,
      checksum: e.checksum,
      now: t,
    };
    if (w.from === null) q.insertEffect.run(params);
    else q.updateEffect.run({ ...params, from: w.from });
    q.updateRun.run({
      run_id: w.runId,
      expected_seq: w.expectedSeq,
      seq: w.seq,
      token,
      state: null,
      set_checkpoint: 0,
      checkpoint: null,
      set_review: 0,
      review_reason: null,
      now: t,
    });
  };
  const tx = db.transaction((ws: Extract<JournalWrite, { kind: "effect" }>[]) => {
    const t = Date.now();
    for (const w of ws) one(w, t);
  });
  return {
    effect: (i) => {
      const ws = effectWrites(`${tag}-run-${i}`, token, seq[i]!, `e-${seq[i]! / 4}`);
      seq[i]! += 4;
      for (const w of ws) {
        tx.immediate([w as Extract<JournalWrite, { kind: "effect" }>]);
        commits++;
      }
      return Promise.resolve();
    },
    commits: () => commits,
    close: () => Promise.resolve(void db.close()),
  };
}

/** Raw SQL on PostgreSQL: the journal's own statement text through a bare pg pool of
 * `runs` connections, each transition an autocommit statement (the server groups commits). */
export async function rawPgSubject(url: string, runs: number, tag: string): Promise<Subject> {
  const pool = new pg.Pool({ ...pgClientConfig(url).config, max: Math.max(1, runs) });
  const token = 1;
  await pool.query(
    `INSERT INTO quiesce_leases (scope, token, held, ttl_ms, acquired_at, heartbeat_at, expires_at, expiry_reported)
     VALUES ($1, $2, true, 3600000, clock_timestamp(), clock_timestamp(), clock_timestamp() + interval '1 hour', false)
     ON CONFLICT (scope) DO NOTHING`,
    [`runtime:${tag}`, token],
  );
  for (let i = 0; i < runs; i++)
    await pool.query(CREATE_RUN, [`${tag}-run-${i}`, tag, `runtime:${tag}`, token, null]);
  const seq = new Array<number>(runs).fill(0);
  let commits = 0;
  return {
    effect: async (i) => {
      const ws = effectWrites(`${tag}-run-${i}`, token, seq[i]!, `e-${seq[i]! / 4}`);
      seq[i]! += 4;
      for (const w of ws as Extract<JournalWrite, { kind: "effect" }>[]) {
        const e = w.effect;
        await pool.query(WRITE_EFFECT, [
          w.runId,
          token,
          w.expectedSeq,
          w.seq,
          w.from,
          e.key,
          e.ordinal,
          e.provider,
          e.state,
          e.prevState,
          e.attempt,
          e.request,
          e.requestId,
          e.result,
          e.context,
          e.reviewReason,
          e.checksum,
          null,
          false,
          null,
        ]);
        commits++;
      }
    },
    commits: () => commits,
    close: () => pool.end(),
  };
}
