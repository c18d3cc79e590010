import { ErrorCode, QuiesceError } from "../domain/errors.js";
import { EventKind, type EventInput } from "../domain/event.js";
import { describeFenceFailure } from "../domain/fencing.js";
import { waveScope } from "../domain/wave-input.js";
import {
  assertHostTransition,
  assertWaveTransition,
  countHosts,
  HostState,
  type HostCounts,
  type WaveState,
} from "../domain/wave-state.js";
import { GroupCommit } from "../store/group-commit.js";
import type { Lease } from "../lease/lease.js";
import { hostIdentity } from "../process/process-identity.js";
import type { Store } from "../store/store.js";
import type {
  WaveHostRecord,
  WaveRecord,
  WaveWrite,
  WaveWriteResult,
} from "../store/wave-store.js";

export interface HostChange {
  reason?: string | null;
  /** JSON-able facts (exit codes, what the check said). */
  detail?: unknown;
  runId?: string;
  start?: boolean;
  finish?: boolean;
  /** The host's lease, released in the same commit as this change if it goes through (the
   * store may not combine them: the lease then stays held, for the caller to release). */
  release?: { lease: Lease; reason: string };
}

/**
 * The only way an agent changes a wave: every host and wave state change is checked against
 * the state machine, then written fenced by the wave's lease token (I3) as a compare-and-swap
 * on the state this process last saw. Writes of hosts finishing together share one commit
 * (group commit); each resolves only after its commit. A refused write means the lease moved
 * on (this process is a zombie): the lease is given up and LEASE_LOST thrown.
 */
export class WaveWriter {
  readonly commit: GroupCommit<WaveWrite, WaveWriteResult>;
  readonly hosts = new Map<string, WaveHostRecord>();
  /** Hosts per state, kept up to date with every write (never recounted). */
  readonly counts: HostCounts;
  readonly scope: string;

  constructor(
    readonly store: Store,
    readonly lease: Lease,
    public wave: WaveRecord,
    hosts: readonly WaveHostRecord[],
  ) {
    // Commits that cannot reach the store are retried while the wave's lease is surely ours.
    this.commit = new GroupCommit(store.waves, lease);
    this.scope = waveScope(wave.name);
    for (const h of hosts) this.hosts.set(h.host, h);
    this.counts = countHosts(hosts.map((h) => h.state));
  }

  host(name: string): WaveHostRecord {
    const h = this.hosts.get(name);
    if (!h)
      throw new QuiesceError(ErrorCode.INTERNAL, `wave ${this.wave.name} has no host ${name}`);
    return h;
  }

  /** Moves a host to `to` (one fenced commit, shared with other hosts'). */
  async setHost(name: string, to: HostState, c: HostChange = {}): Promise<WaveHostRecord> {
    const cur = this.host(name);
    assertHostTransition(name, cur.state, to);
    const reason = c.reason === undefined ? cur.reason : c.reason;
    const detail = c.detail === undefined ? cur.detail : JSON.stringify(c.detail);
    const release = c.release ? c.release.lease.releaseRequest(c.release.reason) : null;
    const r = await this.commit.submit({
      kind: "host",
      wave: this.wave.name,
      token: this.lease.token,
      host: name,
      from: cur.state,
      to,
      reason,
      detail,
      ...(c.runId !== undefined ? { runId: c.runId } : {}),
      ...(c.start ? { start: true } : {}),
      ...(c.finish ? { finish: true } : {}),
      ...(to !== HostState.RUNNING ? { event: this.hostEvent(cur, to, reason) } : {}),
      ...(release ? { release } : {}),
    });
    this.check(r, `host ${name} ${cur.state} -> ${to}`);
    if (r.ok && r.released === true) c.release!.lease.releasedByStore();
    const now = (r as { now: number }).now;
    const next: WaveHostRecord = {
      ...cur,
      state: to,
      reason,
      detail,
      token: this.lease.token,
      runId: c.runId ?? cur.runId,
      attempts: cur.attempts + (c.start ? 1 : 0),
      startedAt: c.start ? now : cur.startedAt,
      finishedAt: c.finish ? now : c.start ? null : cur.finishedAt,
      updatedAt: now,
    };
    this.counts[cur.state]--;
    this.counts[to]++;
    // In place: whoever holds the record (the scheduler's order) sees the new state.
    return Object.assign(cur, next);
  }

  /** Moves the wave to `to`; `settings` (JSON-able) records how this agent runs it. */
  async setWave(
    to: WaveState,
    reason: string | null,
    o: { settings?: unknown; start?: boolean; finish?: boolean; message?: string } = {},
  ): Promise<void> {
    const from = this.wave.state;
    assertWaveTransition(this.wave.name, from, to);
    const settings = o.settings === undefined ? undefined : JSON.stringify(o.settings);
    const r = await this.commit.submit({
      kind: "wave",
      wave: this.wave.name,
      token: this.lease.token,
      from,
      to,
      reason,
      ...(settings !== undefined ? { settings } : {}),
      ...(o.start ? { start: true } : {}),
      ...(o.finish ? { finish: true } : {}),
      event: this.event(
        EventKind.WaveStateChanged,
        o.message ?? `wave ${this.wave.name}: ${from} -> ${to}${reason ? `: ${reason}` : ""}`,
        { from, to, reason },
      ),
    });
    this.check(r, `wave ${from} -> ${to}`);
    const now = (r as { now: number }).now;
    this.wave = {
      ...this.wave,
      state: to,
      reason,
      token: this.lease.token,
      settings: settings ?? this.wave.settings,
      startedAt: o.start ? now : this.wave.startedAt,
      finishedAt: o.finish ? now : o.start ? null : this.wave.finishedAt,
      updatedAt: now,
    };
  }

  private check(r: WaveWriteResult, what: string): void {
    if (r.ok) return;
    if (r.reason === "conflict" || r.reason === "missing")
      throw new QuiesceError(
        ErrorCode.INTERNAL,
        `wave ${this.wave.name}: ${what} refused (${r.reason}): the record changed under this process`,
      );
    const why = describeFenceFailure(this.scope, this.lease.token, r.reason, r.current, r.now);
    this.lease.markLost(`a wave write was refused: ${why}`);
    throw new QuiesceError(ErrorCode.LEASE_LOST, `wave ${this.wave.name}: ${what} refused: ${why}`);
  }

  private hostEvent(cur: WaveHostRecord, to: HostState, reason: string | null): EventInput {
    return this.event(
      EventKind.WaveHostChanged,
      `wave ${this.wave.name}: host ${cur.host} ${cur.state} -> ${to}${reason ? `: ${reason}` : ""}`,
      { wave: this.wave.name, host: cur.host, group: cur.group, from: cur.state, to, reason },
    );
  }

  private event(kind: EventInput["kind"], message: string, detail: Record<string, unknown>) {
    return {
      kind,
      scope: this.scope,
      token: this.lease.token,
      runId: this.lease.runId,
      host: hostIdentity().host,
      pid: process.pid,
      message,
      detail,
    };
  }
}
