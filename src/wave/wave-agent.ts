import { formatDuration } from "../domain/duration.js";
import { EffectState } from "../domain/effect-state.js";
import { ErrorCode, QuiesceError } from "../domain/errors.js";
import { estimateEta, type Eta } from "../domain/wave-eta.js";
import { waveRuntimeId } from "../domain/wave-input.js";
import { waveEnd } from "../domain/wave-end.js";
import { haltReason, nextToStart, planBatch } from "../domain/wave-plan.js";
import { HostState, isLeftover, WaveState, type HostCounts } from "../domain/wave-state.js";
import {
  localMs,
  nextOpening,
  openInterval,
  parseWindow,
  type WaveWindow,
} from "../domain/wave-window.js";
import { Journal } from "../journal/journal.js";
import type { Lease } from "../lease/lease.js";
import type { Leases } from "../lease/leases.js";
import { HostPool } from "./host-pool.js";
import { workOnHost, type HostOutcome, type WorkerContext } from "./host-worker.js";
import { PatchProvider } from "./patch-provider.js";
import { storedSettings, type ResolvedRun } from "./run-options.js";
import type { WaveControl } from "./wave-control.js";
import type { WaveWriter } from "./wave-writer.js";
import { monoMs } from "../process/clock.js";

export type WaveRunOutcome = "completed" | "stopped" | "halted" | "not_acquired" | "lease_lost";

export interface WaveRunResult {
  outcome: WaveRunOutcome;
  /** 0 completed without failures or stopped on request; 1 failures or halted; 75 the lease
   * could not be had or hosts were left busy (run again later); 76 lease lost; 128+n signal. */
  exitCode: number;
  summary: string;
  counts: HostCounts | null;
  token: number | null;
}

export interface WaveHooks {
  onMessage?(line: string): void;
  /** A host started (`running`) or ended (its outcome), with how long it took. */
  onHost?(e: { host: string; outcome: HostOutcome | null; ms: number }): void;
}

/** What a live display shows: the agent's view right now. */
export interface WaveSnapshot {
  wave: string;
  phase: "leftovers" | "batches" | "waiting for window" | "stopping" | "done";
  batch: number;
  counts: HostCounts;
  hosts: number;
  maxFailures: number;
  running: { host: string; group: string | null; forMs: number }[];
  eta: Eta | null;
  halted: string | null;
}

/**
 * One agent's run of a wave, holding its lease: first the hosts an earlier agent left
 * mid-way (settled from the journal), then batch after batch until nothing is left, the
 * failure budget is spent, a health gate fails, a host needs review, or a stop comes.
 */
export class WaveAgent {
  private readonly pool: HostPool<HostOutcome>;
  private readonly ctx: WorkerContext;
  private readonly startCtl = new AbortController();
  private readonly window: WaveWindow | null;
  private readonly durations: number[] = [];
  private halted: string | null = null;
  private healthFailure: { host: string; why: string } | null = null;
  private readonly review = new Set<string>();
  private readonly blocked: string[] = [];
  /** Hosts whose patch was cut off while it ran: outcome unknown until reconciled. */
  private readonly unknown = new Set<string>();
  private fatal: Error | null = null;
  private batchNo = 0;
  phase: WaveSnapshot["phase"] = "leftovers";

  constructor(
    private readonly leases: Leases,
    private readonly lease: Lease,
    private readonly writer: WaveWriter,
    private readonly control: WaveControl,
    private readonly opts: ResolvedRun,
    private readonly hooks: WaveHooks,
  ) {
    this.pool = new HostPool(control.changes);
    const provider = new PatchProvider({
      wave: writer.wave.name,
      check: opts.check,
      idempotent: opts.idempotent,
      runner: opts.runner,
      graceMs: opts.graceMs,
      env: opts.env,
      via: opts.via,
      inProgressWaitMs: opts.leftoverWaitMs,
    });
    const journal = new Journal(leases.store, lease, {
      runtimeId: waveRuntimeId(writer.wave.name),
      providers: [provider],
    });
    this.window = writer.wave.window === null ? null : parseWindow(writer.wave.window);
    this.ctx = {
      store: leases.store,
      leases,
      writer,
      journal,
      provider,
      opts,
      startSignal: this.startCtl.signal,
      inFlight: new Map(),
      say: (l) => this.say(l),
    };
    control.onForce((why) => {
      this.stopStarting(why);
      for (const h of this.ctx.inFlight.values()) h.stop(why);
    });
    lease.signal.addEventListener(
      "abort",
      () => {
        if (!lease.isReleased) control.force(lease.lostReason ?? "the wave's lease was lost");
      },
      { once: true },
    );
  }

  private say(line: string): void {
    this.hooks.onMessage?.(line);
  }

  private stopStarting(why: string): void {
    if (!this.startCtl.signal.aborted)
      this.startCtl.abort(new QuiesceError(ErrorCode.WORK_REFUSED, why));
    this.pool.changes.notify();
  }

  private get mayStart(): boolean {
    return (
      this.halted === null &&
      this.fatal === null &&
      !this.control.draining &&
      !this.control.forced &&
      !this.lease.lost &&
      this.blocked.length === 0
    );
  }

  counts(): HostCounts {
    return { ...this.writer.counts };
  }

  snapshot(): WaveSnapshot {
    const counts = this.counts();
    const now = monoMs();
    const remaining = counts.pending + counts.running + counts.unfinished + counts.skipped;
    return {
      wave: this.writer.wave.name,
      phase: this.phase,
      batch: this.batchNo,
      counts,
      hosts: this.writer.hosts.size,
      maxFailures: this.opts.maxFailures,
      running: this.pool
        .entries()
        .map(([host, r]) => ({ host, group: r.group, forMs: now - r.since })),
      eta: estimateEta({
        now: Date.now(),
        remaining,
        hostDurationsMs: this.durations,
        parallel: Math.min(this.opts.concurrency, this.writer.wave.batchSize),
        window: this.window,
        offsetMin: new Date().getTimezoneOffset(),
      }),
      halted: this.halted,
    };
  }

  async run(): Promise<WaveRunResult> {
    const w = this.writer;
    const taken = this.lease.record.takeover;
    await w.setWave(WaveState.RUNNING, null, {
      settings: storedSettings(this.opts),
      start: true,
      message: `wave ${w.wave.name}: ${w.wave.state} -> running (agent ${this.lease.runId}, token ${this.lease.token}${taken ? `, took over from run ${taken.previous.owner.runId}: ${taken.summary}` : ""})`,
    });
    const leftovers = [...w.hosts.values()].filter((h) => isLeftover(h.state));
    if (leftovers.length > 0) {
      this.say(
        `${leftovers.length} host(s) left mid-way by an earlier agent: settling them from the journal first`,
      );
      await this.runQueue(
        leftovers.map((h) => h.host),
        new Set(),
      );
    }
    this.phase = "batches";
    if (this.mayStart) await this.batches();
    this.phase = "stopping";
    await this.pool.drain();
    this.phase = "done";
    return this.finish();
  }

  /** Stops before any (further) host when the wave's own record says so (e.g. a budget already
   * spent by an earlier run). */
  private checkHalt(): void {
    const why = haltReason({
      counts: this.counts(),
      maxFailures: this.opts.maxFailures,
      healthFailure: this.healthFailure,
      needsReview: [...this.review],
    });
    if (why !== null && this.halted === null) {
      this.halted = why;
      this.say(
        `${why}${this.pool.size > 0 ? ` (${this.pool.size} host(s) in flight finish)` : ""}`,
      );
      this.stopStarting(why);
    }
  }

  private async batches(): Promise<void> {
    const tried = new Set<string>();
    // The writer updates these records in place, so the order always has the current states.
    const order = [...this.writer.hosts.values()];
    let from = 0;
    for (this.checkHalt(); this.mayStart; this.checkHalt()) {
      const { batch, next } = planBatch(order, this.writer.wave.batchSize, tried, from);
      from = next;
      if (batch.length === 0) return;
      this.batchNo++;
      this.say(
        `batch ${this.batchNo}: ${batch
          .map((h) => h.host)
          .slice(0, 10)
          .join(", ")}${batch.length > 10 ? `, ... (${batch.length} hosts)` : ""}`,
      );
      await this.runQueue(
        batch.map((h) => h.host),
        tried,
      );
    }
  }

  /** Works through `hosts` (in order, within the concurrency and group limits and the window)
   * until all are done or no host may start any more; returns when none is in flight. */
  private async runQueue(hosts: string[], tried: Set<string>): Promise<void> {
    const limits = {
      concurrency: this.opts.concurrency,
      maxPerGroup: this.writer.wave.maxPerGroup,
    };
    const queue = hosts.map((h) => ({ host: h, group: this.writer.host(h).group }));
    while (queue.length > 0 || this.pool.size > 0) {
      if (this.mayStart && queue.length > 0) {
        if (this.windowOpen()) {
          for (
            let i = nextToStart(queue, this.pool.groups(), limits);
            i >= 0;
            i = nextToStart(queue, this.pool.groups(), limits)
          ) {
            const next = queue.splice(i, 1)[0]!;
            tried.add(next.host);
            this.startHost(next.host, next.group);
          }
        } else if (this.pool.size === 0) {
          await this.waitForWindow();
          continue;
        }
      }
      if (this.pool.size === 0) return;
      await this.pool.changes.wait();
    }
  }

  private startHost(host: string, group: string | null): void {
    this.hooks.onHost?.({ host, outcome: null, ms: 0 });
    this.pool.start(
      host,
      group,
      () => workOnHost(this.ctx, host),
      (r, ms) => {
        if (!r.ok) {
          if (this.fatal === null && !this.lease.lost) {
            this.fatal = r.error instanceof Error ? r.error : new Error(String(r.error));
            this.say(`host ${host}: ${this.fatal.message}; stopping the wave`);
            this.control.force(`an error on host ${host}`);
          }
          return;
        }
        const o = r.value;
        if (o.kind === "succeeded" || o.kind === "failed") this.durations.push(ms);
        if (o.kind === "failed" && o.health) this.healthFailure ??= { host, why: o.why };
        if (o.kind === "needs_review") this.review.add(host);
        if (o.kind === "blocked") this.blocked.push(host);
        if (o.kind === "unfinished" && o.effect === EffectState.DISPATCHED) this.unknown.add(host);
        this.hooks.onHost?.({ host, outcome: o, ms });
        this.checkHalt();
        if (o.kind === "blocked") this.stopStarting(o.why);
      },
    );
  }

  private windowOpen(): boolean {
    if (this.window === null) return true;
    return openInterval(this.window, this.local(Date.now())) !== null;
  }

  private local(ms: number): number {
    return this.window?.utc ? ms : localMs(ms, new Date(ms).getTimezoneOffset());
  }

  /** Sleeps until the window opens (or a stop comes), in steps of at most a minute. */
  private async waitForWindow(): Promise<void> {
    const w = this.window!;
    const now = Date.now();
    const next = nextOpening(w, this.local(now));
    if (next === null) {
      this.halted = `the window ${w.text} never opens`;
      return;
    }
    const inMs = next.start - this.local(now);
    this.phase = "waiting for window";
    this.say(`outside the window ${w.text}: waiting ${formatDuration(inMs)} for it to open`);
    while (this.mayStart && !this.windowOpen()) {
      const t = setTimeout(
        () => this.pool.changes.notify(),
        Math.min(60_000, Math.max(50, next.start - this.local(Date.now()))),
      );
      await this.pool.changes.wait();
      clearTimeout(t);
    }
    this.phase = "batches";
  }

  private async finish(): Promise<WaveRunResult> {
    const w = this.writer;
    this.fatal ??= this.control.fatal;
    const counts = this.counts();
    const token = this.lease.token;
    if (this.lease.lost)
      return {
        outcome: "lease_lost",
        exitCode: 76,
        summary: `lost the wave's lease: ${this.lease.lostReason ?? "lost"}; the hosts in flight were stopped and the next agent reconciles them`,
        counts,
        token,
      };
    const unclassified = [...this.unknown].filter((h) => w.host(h).state === HostState.UNFINISHED);
    const reviewHosts = [...w.hosts.values()]
      .filter((h) => h.state === HostState.NEEDS_REVIEW)
      .map((h) => h.host);
    const review =
      reviewHosts.length + unclassified.length > 0
        ? `patches of unknown outcome: ${[...reviewHosts, ...unclassified].slice(0, 10).join(", ")}`
        : null;
    // Every host that needs review by now, not only the first.
    const halted =
      this.halted !== null && this.review.size > 0
        ? (haltReason({
            counts,
            maxFailures: this.opts.maxFailures,
            healthFailure: null,
            needsReview: [...this.review],
          }) ?? this.halted)
        : this.halted;
    const c = this.control;
    const { state, reason, exitCode } = waveEnd({
      counts,
      error: this.fatal?.message ?? null,
      halted,
      stop:
        c.draining || c.forced
          ? {
              reason: c.forceReason ?? c.drainReason ?? "stopped",
              signal: c.signal ? signalNumber(c.signal) : null,
            }
          : null,
      blocked: this.blocked,
    });
    const outcome: WaveRunOutcome = state;
    await w.setWave(state, reason, { finish: state === WaveState.COMPLETED });
    await this.control.finish(`wave ${state}: ${reason}`, review);
    if (this.fatal !== null) throw this.fatal;
    return { outcome, exitCode, summary: `wave ${w.wave.name} ${state}: ${reason}`, counts, token };
  }
}

function signalNumber(sig: NodeJS.Signals): number {
  return { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[sig as string] ?? 0;
}
