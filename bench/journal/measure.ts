import { performance } from "node:perf_hooks";
import { walStats } from "../lib/bench-env.js";
import { openFsyncProbe, probeFsyncRate } from "../lib/fsync-probe.js";
import { interleave, perSec } from "../lib/interleave.js";
import { countBetween, straceAvailable, traceFsyncs } from "../lib/strace.js";
import { epochMs, sleep } from "../lib/timed-loop.js";
import { oursSubject, rawPgSubject, rawSqliteSubject, type Subject } from "./subjects.js";

export const CONCURRENT_RUNS = 16;
/** Sequential effects each subject runs before the timed interleave (see measureBackend). */
const WARM_EFFECTS = 1000;

export interface Figure {
  label: string;
  effectsPerSec: number;
  /** Effects per fsync of the probe measured in the same run. */
  perFsync: number;
  /** Commits per effect the code made (group commits for ours). */
  commitsPerEffect: number | null;
  /** Durable syncs per effect actually issued: strace (SQLite) or pg_stat_wal (PostgreSQL). */
  syncsPerEffect: number | null;
}

export interface BackendResult {
  backend: "sqlite" | "postgres";
  fsyncPerSec: number;
  sequential: { ours: Figure; raw: Figure };
  concurrent: { ours: Figure; raw: Figure | null; rawNote: string | null };
  /** Concurrent effects/s over sequential effects/s (ours). */
  groupCommitGain: number;
}

/** Runs `op(i)` on `n` loops at once for `ms`; effects completed per second. */
async function concurrently(
  n: number,
  ms: number,
  op: (i: number) => Promise<void>,
): Promise<{ effects: number; ms: number }> {
  const start = performance.now();
  let effects = 0;
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      while (performance.now() - start < ms) {
        await op(i);
        effects++;
      }
    }),
  );
  return { effects, ms: performance.now() - start };
}

async function syncsSqlite(
  s: Subject,
  runs: number,
  effectsPerRun: number,
  dir: string,
): Promise<number | null> {
  if (!straceAvailable()) return null;
  const trace = await traceFsyncs(process.pid, dir);
  const from = epochMs();
  await Promise.all(
    Array.from({ length: runs }, async (_, i) => {
      for (let k = 0; k < effectsPerRun; k++) await s.effect(i);
    }),
  );
  const to = epochMs();
  return countBetween(await trace.stop(), from, to) / (runs * effectsPerRun);
}

async function syncsPg(
  make: () => Promise<Subject>,
  runs: number,
  effectsPerRun: number,
  server: string,
): Promise<number> {
  const s = await make();
  await sleep(1200);
  const before = await walStats(server);
  await Promise.all(
    Array.from({ length: runs }, async (_, i) => {
      for (let k = 0; k < effectsPerRun; k++) await s.effect(i);
    }),
  );
  await s.close(); // a backend reports its WAL counters when its connection ends
  await sleep(1200);
  const after = await walStats(server);
  return (after.walSync - before.walSync) / (runs * effectsPerRun);
}

export async function measureBackend(
  backend: "sqlite" | "postgres",
  url: string,
  rawUrl: string,
  pgServer: string,
  dir: string,
  seconds: number,
): Promise<BackendResult> {
  const ms = seconds * 1000;
  const tag = (s: string) => `bench-${s}-${Date.now().toString(36)}`;
  // 1. Sequential, interleaved effect by effect with the fsync probe (the disk's rate drifts).
  const ours = await oursSubject(url, 1, tag("seq"));
  const raw =
    backend === "sqlite"
      ? rawSqliteSubject(rawUrl, 1, tag("raw"))
      : await rawPgSubject(rawUrl, 1, tag("raw"));
  // Both warmed with WARM_EFFECTS effects each before anything is timed, as a long-running
  // agent is after its first second: the library's path is many more functions than the raw
  // writes' few, and V8 takes some hundreds of calls to settle them (and its young generation
  // grows to the allocation rate). With 30 each, ours measured 0.91-0.94x raw in this
  // interleave; with 1,000 each 0.96-0.97x (both faster per effect, ours by more).
  for (let i = 0; i < WARM_EFFECTS; i++) {
    await ours.effect(0);
    await raw.effect(0);
  }
  const probe = openFsyncProbe(dir);
  const c0 = { ours: ours.commits(), raw: raw.commits() };
  const seq = await interleave(
    [
      { key: "ours", op: () => ours.effect(0) },
      { key: "raw", op: () => raw.effect(0) },
      { key: "fsync", op: () => probe.op(), perRound: 4 },
    ],
    ms,
  );
  probe.close();
  const fsyncSeq = perSec(seq.totals.get("fsync"));
  const nOurs = seq.totals.get("ours")!.n;
  const nRaw = seq.totals.get("raw")!.n;
  const seqOursCommits = (ours.commits() - c0.ours) / nOurs;
  const seqRawCommits = (raw.commits() - c0.raw) / nRaw;
  await ours.close();
  await raw.close();

  // 2. Sixteen concurrent runs sharing one group commit (ours); the raw baseline for PostgreSQL
  // is 16 connections committing on their own (the server groups WAL flushes).
  const conc = await oursSubject(url, CONCURRENT_RUNS, tag("conc"));
  const cc0 = conc.commits();
  const oc = await concurrently(CONCURRENT_RUNS, ms, (i) => conc.effect(i));
  const concCommits = (conc.commits() - cc0) / oc.effects;
  await conc.close();
  let rc: { effects: number; ms: number } | null = null;
  let rawConcCommits: number | null = null;
  if (backend === "postgres") {
    const r = await rawPgSubject(rawUrl, CONCURRENT_RUNS, tag("rawc"));
    const r0 = r.commits();
    rc = await concurrently(CONCURRENT_RUNS, ms, (i) => r.effect(i));
    rawConcCommits = (r.commits() - r0) / rc.effects;
    await r.close();
  }
  const fsyncAfter = probeFsyncRate(dir, Math.min(ms, 2000));
  const fsyncPerSec = (fsyncSeq + fsyncAfter) / 2;

  // 3. Durable syncs per effect, counted (nothing timed here).
  let seqSyncs: number | null;
  let concSyncs: number | null;
  let rawSyncs: number | null;
  if (backend === "sqlite") {
    const s1 = await oursSubject(url, 1, tag("s1"));
    seqSyncs = await syncsSqlite(s1, 1, 100, dir);
    await s1.close();
    const s16 = await oursSubject(url, CONCURRENT_RUNS, tag("s16"));
    concSyncs = await syncsSqlite(s16, CONCURRENT_RUNS, 20, dir);
    await s16.close();
    const r1 = rawSqliteSubject(rawUrl, 1, tag("r1"));
    rawSyncs = await syncsSqlite(r1, 1, 100, dir);
    await r1.close();
  } else {
    seqSyncs = await syncsPg(() => oursSubject(url, 1, tag("s1")), 1, 100, pgServer);
    concSyncs = await syncsPg(
      () => oursSubject(url, CONCURRENT_RUNS, tag("s16")),
      CONCURRENT_RUNS,
      20,
      pgServer,
    );
    rawSyncs = await syncsPg(() => rawPgSubject(rawUrl, 1, tag("r1")), 1, 100, pgServer);
  }

  const fig = (
    label: string,
    perSecond: number,
    commits: number | null,
    syncs: number | null,
  ): Figure => ({
    label,
    effectsPerSec: perSecond,
    perFsync: perSecond / fsyncPerSec,
    commitsPerEffect: commits,
    syncsPerEffect: syncs,
  });
  const oursSeq = fig(
    "ours, sequential (1 run)",
    perSec(seq.totals.get("ours")),
    seqOursCommits,
    seqSyncs,
  );
  const oursConc = fig(
    `ours, ${CONCURRENT_RUNS} concurrent runs`,
    (oc.effects * 1000) / oc.ms,
    concCommits,
    concSyncs,
  );
  return {
    backend,
    fsyncPerSec,
    sequential: {
      ours: oursSeq,
      raw: fig(
        "raw SQL, same writes, sequential",
        perSec(seq.totals.get("raw")),
        seqRawCommits,
        rawSyncs,
      ),
    },
    concurrent: {
      ours: oursConc,
      raw: rc
        ? fig(
            `raw SQL, ${CONCURRENT_RUNS} connections`,
            (rc.effects * 1000) / rc.ms,
            rawConcCommits,
            null,
          )
        : null,
      rawNote:
        backend === "sqlite"
          ? "raw SQLite has no concurrent variant: better-sqlite3 is synchronous, one writer per file; 16 raw writers are the sequential figure"
          : null,
    },
    groupCommitGain: oursConc.effectsPerSec / oursSeq.effectsPerSec,
  };
}
