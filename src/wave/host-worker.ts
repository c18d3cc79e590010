import { ErrorCode, QuiesceError, isQuiesceError } from "../domain/errors.js";
import { EffectState } from "../domain/effect-state.js";
import { RunState } from "../domain/journal-record.js";
import { hostRunId, hostScope, patchKey } from "../domain/wave-input.js";
import {
  leftoverAction,
  patchOutcome,
  unfinishedReason,
  type HostPhase,
} from "../domain/wave-reconcile.js";
import { canHostTransition, HostState, isLeftover } from "../domain/wave-state.js";
import type { Journal } from "../journal/journal.js";
import type { Run } from "../journal/run.js";
import { crashPoint } from "../fault/crash-points.js";
import { newRunId } from "../lease/acquire-options.js";
import type { Lease } from "../lease/lease.js";
import type { Leases } from "../lease/leases.js";
import { respectedBlockers } from "../lease/respect.js";
import type { Store } from "../store/store.js";
import { retryUnsent } from "../store/store-retry.js";
import { runHealthGate } from "./health-gate.js";
import { HostLog } from "./host-log.js";
import { PATCH_PROVIDER, type HostContext, type PatchProvider } from "./patch-provider.js";
import type { ResolvedRun } from "./run-options.js";
import { fillTemplate } from "./shell-command.js";
import type { HostChange, WaveWriter } from "./wave-writer.js";

/** What a host worker needs from the agent. */
export interface WorkerContext {
  store: Store;
  leases: Leases;
  writer: WaveWriter;
  journal: Journal;
  provider: PatchProvider;
  opts: ResolvedRun;
  /** Aborts when no new host may start (stop, halt, lost lease): ends waits for host leases. */
  startSignal: AbortSignal;
  /** Hosts in flight, for a forced stop: stopping one aborts its run. */
  inFlight: Map<string, { stop(why: string): void }>;
  say(line: string): void;
}

export type HostOutcome =
  | { kind: "succeeded" }
  | { kind: "failed"; why: string; health: boolean }
  | { kind: "skipped"; why: string }
  /** `effect`: the patch's journal state when it stopped (DISPATCHED: outcome unknown). */
  | { kind: "unfinished"; why: string; effect: EffectState | null }
  | { kind: "needs_review"; why: string }
  /** An earlier agent's leftover whose lease stays busy (its patch may still run). */
  | { kind: "blocked"; why: string }
  /** Not started after all (the wave began to stop while it waited for its lease). */
  | { kind: "not_started" };

/**
 * Works one host through: its lease, `running`, the journalled patch, the health gate, and
 * its final state, each state change written before the next step (I8). A host an earlier
 * agent left mid-way is first settled from its journal run (see leftoverAction). Returns how
 * it ended; throws only when this agent can go on no longer (lease lost, store down).
 */
export async function workOnHost(ctx: WorkerContext, name: string): Promise<HostOutcome> {
  const w = ctx.writer;
  const h = w.host(name);
  const runId = hostRunId(w.wave.name, name);
  const leftover = isLeftover(h.state);
  let open = false;
  if (leftover) {
    const snap = await ctx.store.journal.getRun(runId);
    const a = leftoverAction(snap?.run ?? null);
    switch (a.action) {
      case "review":
        if (h.state !== HostState.NEEDS_REVIEW)
          await settle(w, name, HostState.NEEDS_REVIEW, a.why);
        return { kind: "needs_review", why: a.why };
      case "succeeded":
        await settle(w, name, HostState.SUCCEEDED, a.why, { finish: true });
        return { kind: "succeeded" };
      case "failed":
        await settle(w, name, HostState.FAILED, a.why, { finish: true });
        return { kind: "failed", why: a.why, health: false };
      case "resume":
        open = true;
        break;
      case "start":
        break;
    }
  }
  const lease = await takeHostLease(ctx, name, leftover);
  if (!("token" in lease)) return lease;
  const key = patchKey(w.wave.name, name);
  const log = ctx.opts.logDir ? HostLog.open(ctx.opts.logDir, name) : null;
  const hctx: HostContext = { host: name, group: h.group, lease, log };
  ctx.provider.attach(key, hctx);
  let run: Run | null = null;
  let phase: HostPhase = "patch";
  // A stop may come before the run exists (while `running` is written): it is kept and applied
  // to the run as soon as there is one, so the patch is never sent after it.
  let stopped: QuiesceError | null = null;
  const stop = (why: string) => {
    stopped ??= new QuiesceError(ErrorCode.RUN_SUSPENDED, why);
    run?.abort(stopped);
  };
  const onHostLeaseLost = () => stop(lease.lostReason ?? "the host's lease was lost");
  lease.signal.addEventListener("abort", onHostLeaseLost, { once: true });
  ctx.inFlight.set(name, { stop });
  let released = "host done";
  try {
    if (w.host(name).state !== HostState.RUNNING)
      await w.setHost(name, HostState.RUNNING, { start: true, runId, reason: null });
    crashPoint("wave.host-running");
    run = open
      ? await ctx.journal.resume(runId)
      : await ctx.journal.createRun({ runId, checkpoint: { wave: w.wave.name, host: name } });
    if (stopped !== null) run.abort(stopped);
    const result = run.records.has(key)
      ? await run.outcome(key)
      : await run.effect({
          key,
          provider: PATCH_PROVIDER,
          request: { host: name, command: fill(ctx, ctx.opts.patch, name, h.group) },
          context: { wave: w.wave.name, group: h.group },
        });
    const patched = patchOutcome(result);
    if (!patched.ok) {
      await run.fail(patched.why);
      await w.setHost(name, HostState.FAILED, {
        reason: patched.why,
        detail: { patch: result },
        finish: true,
      });
      return { kind: "failed", why: patched.why, health: false };
    }
    phase = "health";
    let health: unknown = null;
    if (ctx.opts.health !== null) {
      const g = await runHealthGate(
        ctx,
        hctx,
        fill(ctx, ctx.opts.health, name, h.group),
        run.signal,
      );
      health = g;
      if (!g.ok) {
        const why = `health gate failed: ${g.why}`;
        await run.fail(why);
        await w.setHost(name, HostState.FAILED, {
          reason: why,
          detail: { patch: result, health },
          finish: true,
        });
        return { kind: "failed", why: g.why, health: true };
      }
    }
    if (health !== null) crashPoint("wave.health-passed");
    await run.complete({ patch: result, health });
    crashPoint("wave.before-host-final");
    // The host's lease goes in the same commit as its final state (the finally below then has
    // nothing left to release); its release is no reason to stop a run that has completed.
    lease.signal.removeEventListener("abort", onHostLeaseLost);
    // The patch's result is in the journal; the row keeps only what the reason does not say.
    await w.setHost(name, HostState.SUCCEEDED, {
      reason: patched.why,
      detail: health === null ? null : { health },
      finish: true,
      release: { lease, reason: released },
    });
    return { kind: "succeeded" };
  } catch (e) {
    released = `host stopped: ${(e as Error).message}`;
    return await onHostError(ctx, name, e, run, phase);
  } finally {
    lease.signal.removeEventListener("abort", onHostLeaseLost);
    ctx.inFlight.delete(name);
    ctx.provider.detach(key);
    log?.close();
    await lease.release(released).catch(() => undefined);
  }
}

function fill(ctx: WorkerContext, template: string, host: string, group: string | null): string {
  return fillTemplate(template, { host, wave: ctx.writer.wave.name, group: group ?? "" });
}

/** Writes `to`, through `running` when the state machine asks for it (a leftover host). */
async function settle(
  w: WaveWriter,
  name: string,
  to: HostState,
  reason: string,
  c: HostChange = {},
) {
  const cur = w.host(name).state;
  if (cur === to && w.host(name).reason === reason) return;
  if (!canHostTransition(cur, to))
    await w.setHost(name, HostState.RUNNING, { start: true, reason: null });
  await w.setHost(name, to, { ...c, reason });
}

/** The host's lease, or how the host ended without it (skipped, blocked, not started). */
async function takeHostLease(
  ctx: WorkerContext,
  name: string,
  leftover: boolean,
): Promise<Lease | HostOutcome> {
  const w = ctx.writer;
  const o = ctx.opts;
  // A host's lease is asked for under the wave's: a store that cannot be reached for a moment
  // (a restarting server) is waited out while the wave's lease is surely ours, as its writes are.
  const untilWaveLeaseEnds = <T>(fn: () => Promise<T>) =>
    retryUnsent(fn, w.lease, { signal: ctx.startSignal });
  let r;
  try {
    const respected =
      o.respect.length > 0 ? await respectedBlocker(ctx, name, untilWaveLeaseEnds) : null;
    r =
      respected !== null
        ? ({ ok: false, message: respected } as const)
        : await untilWaveLeaseEnds(() =>
            ctx.leases.tryAcquire(hostScope(name), {
              ttl: o.ttlMs,
              ...(o.heartbeatMs !== undefined ? { heartbeat: o.heartbeatMs } : {}),
              wait: leftover ? Math.max(o.hostWaitMs, o.leftoverWaitMs) : o.hostWaitMs,
              runId: newRunId(),
              command: `quiesce wave run ${w.wave.name}: ${o.patch}`,
              note: `wave ${w.wave.name}`,
              signal: ctx.startSignal,
              onWait: (p) => ctx.say(`host ${name}: waiting for its lease: ${p.message}`),
            }),
          );
  } catch (e) {
    if (ctx.startSignal.aborted) return { kind: "not_started" };
    throw e;
  }
  if (r.ok) return r.lease;
  return busy(ctx, name, leftover, r.message);
}

/** Why another system's lease on the host keeps us off it (a `--respect`ed system), or null. */
async function respectedBlocker(
  ctx: WorkerContext,
  name: string,
  retry: <T>(fn: () => Promise<T>) => Promise<T>,
): Promise<string | null> {
  const { leases, now } = await retry(() => ctx.store.leases.listLeases());
  const b = respectedBlockers(leases, ctx.opts.respect, name)[0];
  if (!b) return null;
  return `system "${b.owner.system}" holds ${b.scope} (expires in ${Math.round((b.expiresAt - now) / 1000)}s): not touched while it works on the host`;
}

async function busy(
  ctx: WorkerContext,
  name: string,
  leftover: boolean,
  why: string,
): Promise<HostOutcome> {
  const w = ctx.writer;
  const cur = w.host(name).state;
  if (!leftover) {
    await w.setHost(name, HostState.SKIPPED, { reason: why });
    return { kind: "skipped", why };
  }
  const reason = `left mid-way by an earlier agent and still busy: ${why}`;
  if (cur === HostState.RUNNING || cur === HostState.UNFINISHED)
    await w.setHost(name, HostState.UNFINISHED, { reason });
  return { kind: "blocked", why: reason };
}

/** A host stopped by an error, a forced stop or its lease: record what is known. */
async function onHostError(
  ctx: WorkerContext,
  name: string,
  e: unknown,
  run: Run | null,
  phase: HostPhase,
): Promise<HostOutcome> {
  const w = ctx.writer;
  if (w.lease.lost) throw e; // a zombie writes nothing; the next agent reconciles the host
  const why = (e as Error).message;
  const key = patchKey(w.wave.name, name);
  if (isQuiesceError(e, "NEEDS_REVIEW")) {
    const snap = await ctx.store.journal.getRun(hostRunId(w.wave.name, name)).catch(() => null);
    const quarantined = snap?.effects.find((x) => x.key === key)?.reviewReason;
    const reason = `whether the patch landed is unknown: ${quarantined ?? why}`;
    await w.setHost(name, HostState.NEEDS_REVIEW, { reason, finish: true });
    return { kind: "needs_review", why: reason };
  }
  // Without a Run object (it stopped inside the journal's recovery) the store knows the state.
  const effect =
    run !== null
      ? (run.records.get(key)?.state ?? null)
      : ((await ctx.store.journal
          .getRun(hostRunId(w.wave.name, name))
          .then((s) => s?.effects.find((x) => x.key === key)?.state)
          .catch(() => undefined)) ?? null);
  const reason = unfinishedReason(phase, effect, why);
  if (run !== null && run.state === RunState.ACTIVE) await run.suspend(why).catch(() => undefined);
  if (w.host(name).state === HostState.RUNNING)
    await w.setHost(name, HostState.UNFINISHED, { reason, detail: { effect }, finish: true });
  const expected =
    isQuiesceError(e, "RUN_SUSPENDED") ||
    isQuiesceError(e, "LEASE_LOST") ||
    effect === EffectState.DISPATCHED;
  if (!expected) throw e;
  return { kind: "unfinished", why: reason, effect };
}
