import { EffectState } from "../domain/effect-state.js";
import { ErrorCode, QuiesceError } from "../domain/errors.js";
import { EventKind } from "../domain/event.js";
import { validateEffectKey } from "../domain/journal-names.js";
import { RunState, sealEffect, toJsonText } from "../domain/journal-record.js";
import { crashPoint } from "../fault/crash-points.js";
import type { RunSnapshot, SealedEffect } from "../store/journal-store.js";
import { driveEffect } from "./effect-driver.js";
import { RunWriter, type RunHost } from "./run-writer.js";

export type { RunHost };

export interface EffectSpec {
  /** The idempotency key, derived from the logical operation: `invoice:8472:send`. */
  key: string;
  provider: string;
  /** JSON value sent to the provider (recorded before it is sent, replayed from the record). */
  request?: unknown;
  /** Free context for whoever reads the record: URL, identity, page state hash, last action. */
  context?: unknown;
}

/**
 * One run of an agent: a sequence of checkpoints and side effects, journalled under the
 * runtime's lease. Every write is fenced by the lease token (I3) and committed before what it
 * permits (I8). Writes of one run are serialized, each a compare-and-swap on the run's
 * sequence, so the record never interleaves; different runs share commits (group commit).
 */
export class Run extends RunWriter {
  /** Aborts when the lease is lost or the drain deadline stops the run. */
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  /** @internal the last dispatch that failed in an unknown way, per key. */
  readonly lastDispatchError = new Map<string, unknown>();
  /** Why the run was last suspended (for messages). */
  lastSuspension: string | null = null;

  constructor(host: RunHost, snapshot: Pick<RunSnapshot, "run" | "effects">) {
    super(host, snapshot);
    this.signal = AbortSignal.any([host.lease.signal, this.controller.signal]);
  }

  protected notifyChanged(): void {
    this.host.changed(this);
  }

  /** The data of the last checkpoint (what the run's code saved), or undefined. */
  checkpointData<T = unknown>(): T | undefined {
    return this.checkpointText === null ? undefined : (JSON.parse(this.checkpointText) as T);
  }

  /** An effect's recorded result once OBSERVED; undefined before. */
  result<T = unknown>(key: string): T | undefined {
    const e = this.records.get(key);
    return e?.state === EffectState.OBSERVED ? (JSON.parse(e.result!) as T) : undefined;
  }

  get effects(): readonly SealedEffect[] {
    return [...this.records.values()];
  }

  /** Effects dispatched whose fate nobody classified yet (what keeps a drain from QUIESCED). */
  get unclassified(): number {
    return this.effects.filter((e) => e.state === EffectState.DISPATCHED).length;
  }

  /**
   * Performs one side effect exactly through the journal: PLANNED, then DISPATCHED (durable
   * before the request leaves), then ACKNOWLEDGED, then OBSERVED with the result, which it
   * returns. A key already used in this run is refused (DUPLICATE_EFFECT): read its result
   * with `result(key)`. While the runtime drains, the run stops here (RUN_SUSPENDED).
   */
  async effect<T = unknown>(spec: EffectSpec): Promise<T> {
    const key = validateEffectKey(spec.key);
    const provider = this.host.providers.require(spec.provider);
    this.assertActive();
    if (this.records.has(key))
      throw new QuiesceError(
        ErrorCode.DUPLICATE_EFFECT,
        `effect ${key} was already planned in run ${this.id}; an idempotency key names one logical operation (read its result with result(key))`,
        { details: { runId: this.id, key } },
      );
    await this.stopIfDraining();
    this.host.lease.assertHeld();
    await this.mutateEffect(key, (cur, seq, token) => {
      if (cur) return null;
      const effect = sealEffect({
        runId: this.id,
        key,
        ordinal: this.records.size,
        provider: provider.name,
        state: EffectState.PLANNED,
        prevState: null,
        seq,
        attempt: 0,
        token,
        request: toJsonText(spec.request),
        requestId: null,
        result: null,
        context: spec.context === undefined ? null : toJsonText(spec.context),
        reviewReason: null,
      });
      return { effect };
    });
    if (!this.records.has(key))
      throw new QuiesceError(ErrorCode.DUPLICATE_EFFECT, `effect ${key} was planned concurrently`);
    crashPoint("effect.before-dispatch");
    return (await driveEffect(this, key, { waitPending: true })) as T;
  }

  /**
   * Drives an effect planned earlier (in this process or a previous one) to its outcome and
   * returns its result: OBSERVED returns the recorded result, never sending again.
   */
  async outcome<T = unknown>(key: string): Promise<T> {
    this.assertActive();
    if (!this.records.has(key))
      throw new QuiesceError(ErrorCode.INVALID_INPUT, `run ${this.id} has no effect ${key}`);
    return (await driveEffect(this, key, { waitPending: true })) as T;
  }

  /** @internal makes a suspended run active again under this process's lease. */
  async activate(): Promise<void> {
    if (this.broken) throw this.broken;
    if (this.state === RunState.ACTIVE) return;
    if (this.state !== RunState.SUSPENDED)
      throw new QuiesceError(
        this.state === RunState.NEEDS_REVIEW
          ? ErrorCode.NEEDS_REVIEW
          : ErrorCode.INVALID_TRANSITION,
        `run ${this.id} is ${this.state}${this.reviewReason ? ` (${this.reviewReason})` : ""}; only a suspended run can be resumed`,
      );
    await this.mutateRun(() => ({ state: RunState.ACTIVE, reviewReason: null }));
  }

  /** Saves what the run's code needs to continue. While draining, saves, then suspends. */
  async checkpoint(data: unknown): Promise<void> {
    this.assertActive();
    const draining = this.host.draining();
    await this.mutateRun(() => ({
      state: draining ? RunState.SUSPENDED : RunState.ACTIVE,
      checkpoint: toJsonText(data),
      reviewReason: null,
    }));
    if (draining) throw this.suspendedError();
  }

  /** Ends the run. Every effect must be OBSERVED: nothing may be left in flight or in review. */
  async complete(result?: unknown): Promise<void> {
    this.assertActive();
    const open = this.effects.filter((e) => e.state !== EffectState.OBSERVED);
    if (open.length > 0)
      throw new QuiesceError(
        ErrorCode.INVALID_TRANSITION,
        `run ${this.id} cannot complete: effect ${open[0]!.key} is ${open[0]!.state}`,
      );
    await this.mutateRun(() => ({
      state: RunState.COMPLETED,
      checkpoint: result === undefined ? undefined : toJsonText(result),
      reviewReason: null,
    }));
  }

  async fail(reason: string): Promise<void> {
    this.assertActive();
    await this.mutateRun(() => ({ state: RunState.FAILED, reviewReason: reason }));
  }

  /** @internal stops the run at its last checkpoint; it resumes in a later process. */
  async suspend(why: string): Promise<void> {
    if (this.state !== RunState.ACTIVE) return;
    await this.mutateRun(() => ({ state: RunState.SUSPENDED, reviewReason: null }));
    this.lastSuspension = why;
  }

  /** @internal sends the run to review (or fails it) without touching its effects. */
  async toReview(reason: string, state: "needs_review" | "failed" = "needs_review"): Promise<void> {
    await this.mutateRun(() => ({
      state,
      reviewReason: reason,
      event: this.event(
        EventKind.RunNeedsReview,
        `run ${this.id} ${state === "failed" ? "failed" : "needs review"}: ${reason}`,
        { reason, state },
      ),
    }));
  }

  /** @internal stops waiting: the drain deadline passed or the process is going away. */
  abort(reason: QuiesceError): void {
    this.controller.abort(reason);
  }

  async stopIfDraining(): Promise<void> {
    if (!this.host.draining()) return;
    await this.suspend("the runtime is draining");
    throw this.suspendedError();
  }

  private suspendedError(): QuiesceError {
    return new QuiesceError(
      ErrorCode.RUN_SUSPENDED,
      `run ${this.id} was suspended at checkpoint ${this.seq} for maintenance; it resumes in the next process`,
      { details: { runId: this.id, seq: this.seq } },
    );
  }

  private assertActive(): void {
    if (this.broken) throw this.broken;
    if (this.state === RunState.NEEDS_REVIEW)
      throw new QuiesceError(
        ErrorCode.NEEDS_REVIEW,
        `run ${this.id} needs review: ${this.reviewReason ?? "a quarantined effect"} (quiesce runs show ${this.id})`,
      );
    if (this.state !== RunState.ACTIVE)
      throw new QuiesceError(
        ErrorCode.INVALID_TRANSITION,
        `run ${this.id} is ${this.state}, not active`,
      );
  }
}
