import type { PatchResult } from "../domain/wave-reconcile.js";
import { ErrorCode, QuiesceError } from "../domain/errors.js";
import type { Ack, DispatchRequest, LookupAnswer, Provider } from "../journal/provider.js";
import type { ProviderCapabilities } from "../domain/recovery.js";
import type { Lease } from "../lease/lease.js";
import type { HostLog } from "./host-log.js";
import { sleep } from "../process/clock.js";
import { shellQuote } from "../process/shell-quote.js";
import { remoteCommandLine, REMOTE_IN_PROGRESS } from "./remote-command.js";
import {
  describeExit,
  fillTemplate,
  type CommandExit,
  type CommandRun,
  type CommandRunner,
} from "./shell-command.js";

/** The provider name every wave's patch effects are journalled under. */
export const PATCH_PROVIDER = "wave-patch";

/** How a command ended, with the last line it wrote to the host's log ("" without a log). */
export type RanCommand = CommandExit & { lastLine: string };

/** What the journal records before the patch command runs (replayed from the record). */
export interface PatchRequest {
  host: string;
  command: string;
}

/** What a host's command needs that the journal does not record: its lease and its log. */
export interface HostContext {
  host: string;
  group: string | null;
  lease: Lease;
  log: HostLog | null;
}

export interface PatchProviderOptions {
  wave: string;
  /** `--check`: exit 0 patched, 1 not patched, anything else unknown. null: no status lookup. */
  check: string | null;
  /** `--idempotent`: the patch may be run again when whether it ran is unknown. */
  idempotent: boolean;
  runner: CommandRunner;
  graceMs: number;
  env: NodeJS.ProcessEnv;
  /**
   * `--via 'ssh {host}'`: run each command on the host through this, under the remote guard
   * (remote-command.ts); null: run them here.
   */
  via?: string | null;
  /** With `via`: how long a lookup waits while the host says a patch is still in progress. */
  inProgressWaitMs?: number;
}

/**
 * The patch command as a journal provider (src/journal/provider.ts): the capabilities are the
 * user's flags, so the journal's recovery rules (I9) are exactly the wave's: a patch left
 * DISPATCHED by a dead agent is looked up with `--check` (statusLookup), run again only if
 * `--idempotent` (idempotencyKey), and otherwise quarantined for review.
 *
 * A non-zero exit is a definite outcome (the patch says it failed); a patch killed by a signal
 * is not (it may have applied halfway), so dispatch throws and the journal classifies it.
 */
export class PatchProvider implements Provider {
  readonly name = PATCH_PROVIDER;
  readonly capabilities: ProviderCapabilities;
  private readonly contexts = new Map<string, HostContext>();
  /** Outcomes of the patches this process ran itself: its own lookups need no `--check`. */
  private readonly results = new Map<string, PatchResult>();
  /** A copy of the environment, made once (spreading process.env reads every variable). */
  private readonly baseEnv: NodeJS.ProcessEnv;

  constructor(private readonly o: PatchProviderOptions) {
    this.capabilities = { idempotencyKey: o.idempotent, statusLookup: o.check !== null };
    this.baseEnv = { ...o.env };
  }

  /** The host worker registers its lease and log before the journal may dispatch its key. */
  attach(key: string, ctx: HostContext): void {
    this.contexts.set(key, ctx);
  }

  detach(key: string): void {
    this.contexts.delete(key);
    this.results.delete(key);
  }

  async dispatch(req: DispatchRequest): Promise<Ack> {
    const ctx = this.context(req.key);
    ctx.lease.assertHeld(); // I4: no patch once the host's lease is surely ours no more
    const { command } = req.request as PatchRequest;
    let pid = 0;
    const exit = await this.run(
      "patch",
      command,
      ctx,
      req.signal,
      {
        // The patch's pid is on the host's lease before it runs: a takeover probe finds it
        // alive even if this agent dies and the command runs on as another user (sudo).
        beforeStart: (p) => ctx.lease.setChild(p),
        onSpawn: (p) => {
          pid = p;
          req.sent();
        },
      },
      req.key,
    );
    if (exit.aborted) throw abortReason(req.signal, ctx);
    if (exit.exitCode === null)
      throw new Error(`the patch command was ${describeExit(exit)}: whether it applied is unknown`);
    const result: PatchResult = {
      exitCode: exit.exitCode,
      via: "patch",
      ...(exit.lastLine ? { output: exit.lastLine } : {}),
      ...(req.attempt > 1 ? { attempt: req.attempt } : {}),
    };
    this.results.set(req.key, result);
    return { requestId: `pid ${pid}`, result };
  }

  async lookup(key: string, signal: AbortSignal): Promise<LookupAnswer> {
    const mine = this.results.get(key);
    if (mine) return { status: "observed", requestId: null, result: mine };
    const ctx = this.context(key);
    const command = fillTemplate(this.o.check!, {
      host: ctx.host,
      wave: this.o.wave,
      group: ctx.group ?? "",
    });
    let exit = await this.run("check", command, ctx, signal, {}, key);
    // A patch still running on the host (its remote guard says so) is never "not patched":
    // wait for it to end (its own guard ends it by its lease's deadline), then ask again.
    const until = Date.now() + (this.o.inProgressWaitMs ?? 0);
    while (this.o.via && exit.exitCode === REMOTE_IN_PROGRESS && Date.now() < until) {
      await sleep(1000, signal);
      exit = await this.run("check", command, ctx, signal, {}, key);
    }
    if (this.o.via && exit.exitCode === REMOTE_IN_PROGRESS)
      throw new Error(
        `the patch of ${ctx.host} is still in progress on the host (its remote guard says so): neither "patched" nor "not patched"`,
      );
    if (exit.aborted) throw abortReason(signal, ctx);
    if (exit.exitCode === 0) {
      const result: PatchResult = { exitCode: 0, via: "check" };
      return { status: "observed", requestId: null, result };
    }
    if (exit.exitCode === 1) return { status: "absent" };
    throw new Error(
      `the --check command ${describeExit(exit)} for ${ctx.host}: neither "patched" (0) nor "not patched" (1)`,
    );
  }

  /** Runs one of the host's commands with the host lease's identity in its environment. */
  run(
    what: string,
    command: string,
    ctx: HostContext,
    signal: AbortSignal,
    hooks: Pick<CommandRun, "beforeStart" | "onSpawn"> = {},
    /** The patch's idempotency key (the remote guard's name for it); health uses its own. */
    key = `${this.o.wave}:${ctx.host}:${what}`,
  ): Promise<RanCommand> {
    const start = ctx.log?.begin(what, command) ?? 0;
    const leaseEnv = {
      QUIESCE_FENCING_TOKEN: String(ctx.lease.token),
      QUIESCE_LEASE_SCOPE: ctx.lease.scope,
      // Besides the recorded pid, the takeover probe finds a dead agent's commands by this.
      QUIESCE_RUN_ID: ctx.lease.runId,
      QUIESCE_WAVE: this.o.wave,
      QUIESCE_HOST: ctx.host,
    };
    const env = { ...this.baseEnv, ...leaseEnv };
    const via = this.o.via
      ? fillTemplate(this.o.via, { host: ctx.host, wave: this.o.wave, group: ctx.group ?? "" })
      : null;
    // On the host, the command gets the lease's identity too (ssh passes no environment).
    const exports = Object.entries(leaseEnv)
      .map(([k, v]) => `${k}=${shellQuote(v)}`)
      .join(" ");
    const line =
      via === null
        ? command
        : remoteCommandLine(
            via,
            `export ${exports}; ${command}`,
            what === "check"
              ? { mode: "check", key }
              : { mode: "run", key, deadlineMs: ctx.lease.remainingMs(), graceMs: this.o.graceMs },
          );
    return this.o
      .runner({
        command: line,
        env,
        outputFd: ctx.log?.fd ?? null,
        signal: AbortSignal.any([signal, ctx.lease.signal]),
        graceMs: this.o.graceMs,
        deadline: ctx.lease,
        armRemote: via !== null,
        ...hooks,
      })
      .then((exit) => {
        const line = ctx.log?.lastLine(start) ?? "";
        ctx.log?.end(`${what} ${describeExit(exit)}`);
        return { ...exit, lastLine: line };
      });
  }

  private context(key: string): HostContext {
    const ctx = this.contexts.get(key);
    if (!ctx)
      throw new QuiesceError(
        ErrorCode.INTERNAL,
        `no host is attached to effect ${key}: the wave's patch provider runs only under a host's lease`,
      );
    return ctx;
  }
}

function abortReason(signal: AbortSignal, ctx: HostContext): Error {
  const r: unknown = signal.aborted ? signal.reason : ctx.lease.signal.reason;
  return r instanceof Error ? r : new Error(String(r));
}
