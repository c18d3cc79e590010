import type { BackendName } from "../lib/args.js";
import { walStats } from "../lib/bench-env.js";
import { countBetween, straceAvailable, traceFsyncs } from "../lib/strace.js";
import { epochMs, runTimes, sleep } from "../lib/timed-loop.js";
import { leasesSubject, rawSubject, storeSubject, type Subject, type Target } from "./subjects.js";
import type { Key, Opened } from "./throughput.js";

/** Cycles per variant counted under strace / pg_stat_wal, to show commits per cycle. */
const CYCLES = 200;

export type Syncs = Map<Key, { syncs: number; walBytes: number | null }>;

/** Durable syncs one cycle issues, counted with strace on this process (SQLite, and
 * proper-lockfile on either backend). ptrace slows every system call: nothing is timed here. */
export async function localSyncs(
  backend: BackendName,
  opened: readonly Opened[],
  dir: string,
): Promise<Syncs> {
  const out: Syncs = new Map();
  if (!straceAvailable()) return out;
  const local = opened.filter((o) => backend === "sqlite" || o.key === "lockfile");
  const trace = await traceFsyncs(process.pid, dir);
  const windows = [];
  for (const o of local) {
    const from = epochMs();
    await runTimes(CYCLES, o.subject.op);
    windows.push({ key: o.key, from, to: epochMs() });
  }
  const times = await trace.stop();
  for (const w of windows) {
    out.set(w.key, { syncs: countBetween(times, w.from, w.to) / CYCLES, walBytes: null });
  }
  return out;
}

/** WAL syncs per cycle from the server's pg_stat_wal (server-wide). A backend reports its
 * counters when its connection ends, so each variant runs on fresh connections closed
 * before the second reading. */
export async function walSyncs(t: Target, out: Syncs): Promise<void> {
  const u = new URL(t.url);
  u.searchParams.delete("schema");
  const server = u.toString();
  const makers: [Key, () => Promise<Subject>][] = [
    ["raw", () => rawSubject(t, "bench:raw")],
    ["rawPrepared", () => rawSubject(t, "bench:raw-prepared", true)],
    ["store", () => storeSubject(t, "bench:store")],
    ["leases", () => leasesSubject(t, "bench:leases")],
  ];
  await sleep(300); // the timed connections' backends exit and report first
  for (const [key, make] of makers) {
    const s = await make();
    const before = await walStats(server);
    await runTimes(CYCLES, s.op);
    await s.close();
    await sleep(300);
    const after = await walStats(server);
    out.set(key, {
      syncs: (after.walSync - before.walSync) / CYCLES,
      walBytes: (after.walBytes - before.walBytes) / CYCLES,
    });
  }
}
