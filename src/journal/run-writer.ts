import { ErrorCode, QuiesceError } from "../domain/errors.js";
import type { EventInput } from "../domain/event.js";
import { describeFenceFailure, type FenceFailure } from "../domain/fencing.js";
import type { RunRecord, RunState } from "../domain/journal-record.js";
import type { Lease } from "../lease/lease.js";
import { hostIdentity } from "../process/process-identity.js";
import type { JournalResult, RunSnapshot, SealedEffect } from "../store/journal-store.js";
import type { EffectChange } from "./effect-change.js";
import type { GroupCommit } from "../store/group-commit.js";
import type { ProviderRegistry } from "./provider.js";
import type { Run } from "./run.js";

/** What a run needs from whoever runs it (a Journal, usually inside a Runtime). */
export interface RunHost {
  readonly lease: Lease;
  readonly writer: GroupCommit;
  readonly providers: ProviderRegistry;
  /** True once a drain began: a run stops at its next checkpoint. */
  draining(): boolean;
  /** The run's state or its effects in flight changed. */
  changed(run: Run): void;
  /** Logs an event outside any journal write (a late acknowledgement). */
  recordEvent(e: EventInput): Promise<void>;
}

const FENCE_REASONS: readonly string[] = ["not_held", "token_mismatch", "expired"];

/**
 * A run's record in memory and the only way to change it: every write is built from the
 * current record, serialized behind the previous one (so the record never interleaves), and
 * is a compare-and-swap on the run's checkpoint sequence fenced by the lease token (I3). A
 * refused write breaks the run: a zombie gives its lease up; anything else is a bug.
 */
export abstract class RunWriter {
  readonly id: string;
  readonly runtimeId: string;
  readonly scope: string;
  state: RunState;
  seq: number;
  reviewReason: string | null;
  /** @internal */ readonly host: RunHost;
  /** @internal by key, in planning order. */ readonly records = new Map<string, SealedEffect>();
  protected checkpointText: string | null;
  protected broken: QuiesceError | null = null;
  private lock: Promise<unknown> = Promise.resolve();

  constructor(host: RunHost, snapshot: Pick<RunSnapshot, "run" | "effects">) {
    const r: RunRecord = snapshot.run;
    this.host = host;
    this.id = r.runId;
    this.runtimeId = r.runtimeId;
    this.scope = r.scope;
    this.state = r.state;
    this.seq = r.seq;
    this.reviewReason = r.reviewReason;
    this.checkpointText = r.checkpoint;
    for (const e of snapshot.effects) this.records.set(e.key, e);
  }

  protected abstract notifyChanged(): void;

  /** @internal an event about this run, from this process. */
  event(
    kind: EventInput["kind"],
    message: string,
    detail: Record<string, unknown> = {},
  ): EventInput {
    return {
      kind,
      scope: this.scope,
      token: this.host.lease.token,
      runId: this.id,
      host: hostIdentity().host,
      pid: process.pid,
      message,
      detail,
    };
  }

  /** Runs `fn` after every earlier write of this run finished (writes never interleave). */
  protected serialize<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.lock.then(fn, fn);
    this.lock = next.catch(() => undefined);
    return next;
  }

  /**
   * @internal writes one effect change built from the current record (or skips it when
   * `build` returns null: the record moved on meanwhile). Returns the new record, or null.
   */
  mutateEffect(
    key: string,
    build: (cur: SealedEffect | undefined, seq: number, token: number) => EffectChange | null,
  ): Promise<SealedEffect | null> {
    return this.serialize(async () => {
      if (this.broken) throw this.broken;
      const cur = this.records.get(key);
      const seq = this.seq + 1;
      const token = this.host.lease.token;
      const change = build(cur, seq, token);
      if (change === null) return null;
      const r = await this.host.writer.submit({
        kind: "effect",
        token,
        runId: this.id,
        expectedSeq: this.seq,
        seq,
        from: cur?.state ?? null,
        effect: change.effect,
        ...(change.run ? { run: change.run } : {}),
        ...(change.event ? { event: change.event } : {}),
      });
      this.check(r, `effect ${key} -> ${change.effect.state}`);
      this.seq = seq;
      this.records.set(key, change.effect);
      if (change.run) {
        this.state = change.run.state;
        this.reviewReason = change.run.reviewReason;
      }
      this.notifyChanged();
      return change.effect;
    });
  }

  protected mutateRun(
    build: () => {
      state: RunState;
      checkpoint?: string;
      reviewReason: string | null;
      event?: EventInput;
    },
  ): Promise<void> {
    return this.serialize(async () => {
      if (this.broken) throw this.broken;
      const seq = this.seq + 1;
      const w = build();
      const r = await this.host.writer.submit({
        kind: "run",
        token: this.host.lease.token,
        runId: this.id,
        expectedSeq: this.seq,
        seq,
        state: w.state,
        ...(w.checkpoint !== undefined ? { checkpoint: w.checkpoint } : {}),
        reviewReason: w.reviewReason,
        ...(w.event ? { event: w.event } : {}),
      });
      this.check(r, `run -> ${w.state}`);
      this.seq = seq;
      this.state = w.state;
      this.reviewReason = w.reviewReason;
      if (w.checkpoint !== undefined) this.checkpointText = w.checkpoint;
      this.notifyChanged();
    });
  }

  /** A refused write: a zombie (lease moved on) gives the lease up; anything else is a bug. */
  private check(r: JournalResult, what: string): void {
    if (r.ok) return;
    const token = this.host.lease.token;
    if (FENCE_REASONS.includes(r.reason)) {
      const why = describeFenceFailure(
        this.scope,
        token,
        r.reason as FenceFailure,
        r.current,
        r.now,
      );
      this.host.lease.markLost(`a journal write was refused: ${why}`);
      this.broken = new QuiesceError(
        ErrorCode.LEASE_LOST,
        `run ${this.id}: ${what} refused: ${why}`,
        {
          details: { runId: this.id, reason: r.reason },
        },
      );
    } else if (r.reason === "duplicate") {
      throw new QuiesceError(
        ErrorCode.DUPLICATE_EFFECT,
        `run ${this.id}: ${what} refused: the key already exists`,
      );
    } else {
      this.broken = new QuiesceError(
        ErrorCode.INTERNAL,
        `run ${this.id}: ${what} refused (${r.reason}): the record changed under this process`,
        { details: { runId: this.id, reason: r.reason } },
      );
    }
    this.notifyChanged();
    throw this.broken;
  }
}
