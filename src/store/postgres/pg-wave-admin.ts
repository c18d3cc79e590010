import type { EventInput } from "../../domain/event.js";
import { hostRunId, waveRuntimeId, waveScope } from "../../domain/wave-input.js";
import { leaseFromRow, type LeaseRow } from "../rows.js";
import type { PruneResult } from "../store.js";
import type { WaveAdminOutcome } from "../wave-store.js";
import { withHosts } from "../wave-rows.js";
import { insertEvent, type Query } from "./pg-tx.js";

/**
 * Operator actions on waves (retry, delete) and `store prune` on PostgreSQL, each inside the
 * caller's transaction. The wave row and the wave's lease row are locked FOR UPDATE first: an
 * agent's acquisition (an upsert of the lease row) and its fenced writes wait behind us, and we
 * see a lease taken just before. Times are the server's clock (I10).
 */
const LOCK_WAVE = "SELECT state FROM quiesce_waves WHERE name = $1 FOR UPDATE";
const LOCK_LEASE = `
SELECT l.scope, l.token, l.held, l.run_id, l.system, l.host, l.pid, l.pid_start, l.boot_id,
       l.child_pid, l.child_pid_start, l.command, l.note, l.ttl_ms,
       quiesce_ms(l.acquired_at) AS acquired_at, quiesce_ms(l.heartbeat_at) AS heartbeat_at,
       quiesce_ms(l.expires_at) AS expires_at
  FROM quiesce_leases l WHERE l.scope = $1 FOR UPDATE`;
const NOW = "SELECT quiesce_ms(clock_timestamp()) AS now";

async function refusal(
  q: Query,
  name: string,
): Promise<{ now: number; refused: WaveAdminOutcome | null }> {
  const wave = await q(LOCK_WAVE, [name]);
  const [lease] = await q<LeaseRow>(LOCK_LEASE, [waveScope(name)]);
  const now = Number((await q<{ now: string }>(NOW))[0]!.now);
  if (wave.length === 0)
    return { now, refused: { ok: false, reason: "missing", holder: null, now } };
  const holder = leaseFromRow(lease);
  if (holder !== null && holder.expiresAt > now)
    return { now, refused: { ok: false, reason: "running", holder, now } };
  return { now, refused: null };
}

export async function pgRetryHosts(
  q: Query,
  name: string,
  hosts: readonly string[],
  event: EventInput,
): Promise<WaveAdminOutcome> {
  const { now, refused } = await refusal(q, name);
  if (refused) return refused;
  const rows = await q<{ host: string }>(
    `UPDATE quiesce_wave_hosts
        SET state = 'pending', reason = 'put back to pending by wave retry', detail = NULL,
            finished_at = NULL, updated_at = clock_timestamp()
      WHERE wave = $1 AND host = ANY($2::text[]) AND state = 'failed'
      RETURNING host`,
    [name, hosts],
  );
  const order = new Map(hosts.map((h, i) => [h, i]));
  const retried = rows.map((r) => r.host).sort((a, b) => order.get(a)! - order.get(b)!);
  if (retried.length > 0) {
    await q("DELETE FROM quiesce_runs WHERE run_id = ANY($1::text[])", [
      retried.map((h) => hostRunId(name, h)),
    ]);
    await q(
      `UPDATE quiesce_waves SET state = 'stopped', reason = $2, finished_at = NULL,
          updated_at = clock_timestamp() WHERE name = $1 AND state = 'completed'`,
      [name, `${retried.length} failed host(s) put back to pending by wave retry`],
    );
    await insertEvent(q, withHosts(event, retried));
  }
  return { ok: true, hosts: retried, now };
}

export async function pgDeleteWave(
  q: Query,
  name: string,
  event: EventInput,
): Promise<WaveAdminOutcome> {
  const { now, refused } = await refusal(q, name);
  if (refused) return refused;
  await q(
    `DELETE FROM quiesce_runs WHERE run_id IN
       (SELECT run_id FROM quiesce_wave_hosts WHERE wave = $1 AND run_id IS NOT NULL)`,
    [name],
  );
  await q("DELETE FROM quiesce_waves WHERE name = $1", [name]); // hosts: ON DELETE CASCADE
  await q("DELETE FROM quiesce_runtimes WHERE runtime_id = $1", [waveRuntimeId(name)]);
  await insertEvent(q, event);
  return { ok: true, hosts: [], now };
}

export async function pgPrune(
  q: Query,
  olderThanMs: number,
  event: (r: PruneResult) => EventInput,
): Promise<PruneResult> {
  const [c] = await q<{ before: string; cutoff: Date }>(
    `SELECT quiesce_ms(clock_timestamp()) - $1::bigint AS before,
            clock_timestamp() - make_interval(secs => $1::double precision / 1000) AS cutoff`,
    [olderThanMs],
  );
  const cutoff = c!.cutoff;
  const count = async (sql: string) => Number((await q<{ n: string }>(sql, [cutoff]))[0]!.n);
  const effects = await count(
    `SELECT count(*) AS n FROM quiesce_effects WHERE run_id IN (SELECT run_id FROM quiesce_runs
       WHERE state IN ('completed', 'failed') AND updated_at < $1)`,
  );
  const runs = await count(
    `WITH d AS (DELETE FROM quiesce_runs WHERE state IN ('completed', 'failed')
       AND updated_at < $1 RETURNING 1) SELECT count(*) AS n FROM d`,
  );
  const waves = await count(
    `WITH d AS (DELETE FROM quiesce_waves WHERE state = 'completed'
       AND coalesce(finished_at, updated_at) < $1 RETURNING 1) SELECT count(*) AS n FROM d`,
  );
  const events = await count(
    "WITH d AS (DELETE FROM quiesce_events WHERE at < $1 RETURNING 1) SELECT count(*) AS n FROM d",
  );
  const r: PruneResult = { runs, effects, waves, events, before: Number(c!.before) };
  await insertEvent(q, event(r));
  return r;
}
