import { spawn } from "node:child_process";
import type { LeaseRecord } from "../../domain/lease.js";
import type { ProbeResult } from "../../domain/probe.js";
import { commandProbeVerdict } from "../../domain/probe-verdicts.js";

/** Single-quotes a value for sh, so a host or run id from the store cannot inject commands. */
function shellQuote(v: string): string {
  return `'${v.replaceAll("'", `'\\''`)}'`;
}

/** Fills `{host} {pid} {child_pid} {run_id} {scope}` in a probe template, shell-quoted. */
export function fillProbeTemplate(template: string, lease: LeaseRecord): string {
  const o = lease.owner;
  const values: Record<string, string> = {
    host: o.host,
    pid: o.pid === null ? "" : String(o.pid),
    child_pid: o.childPid === null ? "" : String(o.childPid),
    run_id: o.runId,
    scope: lease.scope,
    system: o.system,
  };
  return template.replace(/\{(host|pid|child_pid|run_id|scope|system)\}/g, (_, k: string) =>
    shellQuote(values[k]!),
  );
}

/**
 * Runs a user's probe (`ssh {host} kill -0 {pid}`, an orchestrator API call): exit 0 alive,
 * 1 dead, anything else or a timeout unknown. The probe's process group is killed on timeout.
 */
export function probeCommand(
  template: string,
  lease: LeaseRecord,
  timeoutMs: number,
): Promise<ProbeResult> {
  const command = fillProbeTemplate(template, lease);
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", command], {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    const keep = (d: Buffer) => {
      output = (output + d.toString()).slice(-2000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* gone */
      }
    }, timeoutMs);
    child.once("error", (e) => {
      clearTimeout(timer);
      resolve(commandProbeVerdict(command, { code: 127, timedOut: false, output: e.message }));
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve(commandProbeVerdict(command, { code, timedOut, output }));
    });
  });
}
