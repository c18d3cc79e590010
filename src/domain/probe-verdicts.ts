import { formatDuration } from "./duration.js";
import type { LeaseRecord } from "./lease.js";
import type { ProbeResult, ProbeVerdict } from "./probe.js";

/**
 * The pure halves of the probes: each takes facts gathered elsewhere (store rows, /proc, an exit
 * code) and returns a verdict with its evidence. Keeping them pure lets every branch be tested
 * without a real dead process.
 */

/** Heartbeat age on the store clock: required for takeover, never proof of death on its own. */
export function heartbeatProbe(lease: LeaseRecord, storeNow: number): ProbeResult {
  const age = storeNow - lease.heartbeatAt;
  if (lease.expiresAt > storeNow) {
    return {
      probe: "heartbeat",
      verdict: "alive",
      evidence: `last heartbeat ${formatDuration(age)} ago; the lease is valid for ${formatDuration(lease.expiresAt - storeNow)} more`,
    };
  }
  return {
    probe: "heartbeat",
    verdict: "unknown",
    evidence: `no heartbeat for ${formatDuration(age)} (TTL ${formatDuration(lease.ttlMs)}): stale, which alone proves nothing`,
  };
}

/** What the store knows of the owner's run: its last sign of work, and whether it gave this
 * lease (scope and token) up itself: after its work ended it tried to release too late. */
export interface OwnerActivity {
  last: RunActivity | null;
  relinquishedAt: number | null;
}

export interface RunActivity {
  /** Store clock, epoch ms. */
  at: number;
  /** What the run recorded: an event kind, a checkpoint. */
  what: string;
}

/** The owner's run wrote something (an event, a checkpoint) since its last heartbeat, recently. */
export function runActivityProbe(
  lease: LeaseRecord,
  activity: OwnerActivity,
  storeNow: number,
): ProbeResult {
  const run = lease.owner.runId;
  const last = activity.last;
  if (activity.relinquishedAt !== null) {
    return {
      probe: "run-activity",
      verdict: "dead",
      evidence: `run ${run} gave this lease up itself ${formatDuration(storeNow - activity.relinquishedAt)} ago: its work under it ended and its late release was refused`,
    };
  }
  if (last && last.at > lease.heartbeatAt && storeNow - last.at < lease.ttlMs) {
    return {
      probe: "run-activity",
      verdict: "alive",
      evidence: `run ${run} recorded ${last.what} ${formatDuration(storeNow - last.at)} ago, after its last heartbeat`,
    };
  }
  const since = Math.max(last?.at ?? 0, lease.heartbeatAt);
  return {
    probe: "run-activity",
    verdict: "unknown",
    evidence: `no activity from run ${run} for ${formatDuration(storeNow - since)}`,
  };
}

/** What /proc (or the platform) says about one recorded process. */
export interface ProcessFacts {
  pid: number;
  /** The start time recorded with the lease, if any. */
  recordedStart: string | null;
  /** Whether a process with this pid exists now (kill -0). */
  exists: boolean;
  /** Its start time now, if readable. */
  currentStart: string | null;
  /** One-letter state from /proc/PID/stat (R, S, D, T, Z, ...), if readable. */
  state: string | null;
}

export interface LocalFacts {
  owner: LeaseRecord["owner"];
  thisHost: string;
  thisBootId: string | null;
  holder: ProcessFacts | null;
  child: ProcessFacts | null;
  /** The holder recorded that it gave this very lease (scope and token) up. */
  relinquished: boolean;
  /**
   * Live processes of this host whose environment carries the lease's run id
   * (QUIESCE_RUN_ID): the wrapped command and anything it started, even what left its process
   * group. Optional: not every platform can tell.
   */
  runProcesses?: readonly number[];
}

type ProcState = "running" | "stopped" | "gone" | "reused" | "unknown";

function processState(p: ProcessFacts): ProcState {
  if (!p.exists) return "gone";
  if (p.state === "Z" || p.state === "X") return "gone"; // exited, not yet reaped
  if (p.recordedStart !== null && p.currentStart !== null && p.recordedStart !== p.currentStart)
    return "reused";
  if (p.recordedStart !== null && p.currentStart === null) return "unknown";
  return p.state === "T" || p.state === "t" ? "stopped" : "running";
}

/**
 * Same host only. A reboot (new boot id) ends every process; a pid that is gone or now belongs
 * to another process (different start time) is dead. The holder OR the command it wraps still
 * running means the work is alive: a SIGKILLed `quiesce run` whose command runs on is not dead.
 */
export function localProcessVerdict(f: LocalFacts): ProbeResult {
  const probe = "local-process";
  const o = f.owner;
  const result = (verdict: ProbeVerdict, evidence: string): ProbeResult => ({
    probe,
    verdict,
    evidence,
  });
  if (o.host !== f.thisHost)
    return result("unknown", `the owner ran on ${o.host}, not on this host (${f.thisHost})`);
  if (o.bootId !== null && f.thisBootId !== null && o.bootId !== f.thisBootId) {
    return result(
      "dead",
      `${o.host} rebooted since the lease was taken (boot id ${o.bootId}, now ${f.thisBootId})`,
    );
  }
  const procs = [
    f.holder ? { role: "holder", facts: f.holder } : null,
    f.child ? { role: "command", facts: f.child } : null,
  ].filter((p): p is { role: string; facts: ProcessFacts } => p !== null);
  if (procs.length === 0)
    return result("unknown", `no process was recorded for the lease on ${o.host}`);
  const states = procs.map((p) => ({ ...p, state: processState(p.facts) }));
  const holderGone = states.some(
    (s) => s.role === "holder" && (s.state === "gone" || s.state === "reused"),
  );
  for (const s of states) {
    // A holder that recorded giving this lease up (self-fencing) is not working under it,
    // even if its process lives on; the command it wrapped still counts.
    if (s.role === "holder" && f.relinquished && (s.state === "running" || s.state === "stopped"))
      continue;
    if (s.state === "running" && s.role === "command" && holderGone) {
      return result(
        "alive",
        `holder pid ${o.pid} is gone but the command it wrapped, pid ${s.facts.pid} on ${o.host}, still runs: the work is not finished`,
      );
    }
    if (s.state === "running") {
      return result("alive", `${s.role} pid ${s.facts.pid} on ${o.host} is still running`);
    }
    if (s.state === "stopped") {
      return result(
        "alive",
        `${s.role} pid ${s.facts.pid} on ${o.host} is alive but stopped (SIGSTOP or a debugger): hung?`,
      );
    }
  }
  const straggler = f.runProcesses?.find((pid) => pid !== o.pid);
  if (straggler !== undefined) {
    return result(
      "alive",
      `pid ${straggler} on ${o.host}, started under run ${o.runId}, is still running: the work is not finished`,
    );
  }
  const relinquishedHolder = states.find(
    (s) =>
      s.role === "holder" && f.relinquished && (s.state === "running" || s.state === "stopped"),
  );
  if (relinquishedHolder) {
    return result(
      "unknown",
      `holder pid ${relinquishedHolder.facts.pid} on ${o.host} still runs but gave this lease up itself`,
    );
  }
  if (states.some((s) => s.state === "unknown")) {
    const s = states.find((x) => x.state === "unknown")!;
    return result(
      "unknown",
      `${s.role} pid ${s.facts.pid} on ${o.host} exists but its start time cannot be read`,
    );
  }
  const parts = states.map((s) =>
    s.state === "reused"
      ? `${s.role} pid ${s.facts.pid} was reused by another process (started at ${s.facts.currentStart}, recorded ${s.facts.recordedStart})`
      : `${s.role} pid ${s.facts.pid} is gone`,
  );
  return result("dead", `${parts.join("; ")} on ${o.host}`);
}

/** A user command probe: exit 0 alive, 1 dead, anything else (or a timeout) unknown. */
export function commandProbeVerdict(
  command: string,
  outcome: { code: number | null; timedOut: boolean; output: string },
): ProbeResult {
  const tail = outcome.output.trim().split("\n").slice(-1)[0]?.slice(0, 200) ?? "";
  const said = tail === "" ? "" : `: ${tail}`;
  if (outcome.timedOut)
    return { probe: "command", verdict: "unknown", evidence: `\`${command}\` timed out${said}` };
  if (outcome.code === 0)
    return {
      probe: "command",
      verdict: "alive",
      evidence: `\`${command}\` exited 0 (alive)${said}`,
    };
  if (outcome.code === 1)
    return { probe: "command", verdict: "dead", evidence: `\`${command}\` exited 1 (dead)${said}` };
  return {
    probe: "command",
    verdict: "unknown",
    evidence: `\`${command}\` exited ${outcome.code ?? "by a signal"}, which says neither alive nor dead${said}`,
  };
}
