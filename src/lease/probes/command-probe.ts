import type { LeaseRecord } from "../../domain/lease.js";
import type { ProbeResult } from "../../domain/probe.js";
import { commandProbeVerdict } from "../../domain/probe-verdicts.js";
import { GroupChild } from "../../process/child-runner.js";
import { shellQuote } from "../../process/shell-quote.js";

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
  // Quoted, so that a host or run id from the store cannot inject commands.
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
  return GroupChild.start({ command: { shell: command }, stdio: ["ignore", "pipe", "pipe"] }).then(
    (child) =>
      new Promise<ProbeResult>((resolve) => {
        let output = "";
        const keep = (d: Buffer) => {
          output = (output + d.toString()).slice(-2000);
        };
        child.process.stdout!.on("data", keep);
        child.process.stderr!.on("data", keep);
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          child.signal("SIGKILL");
        }, timeoutMs);
        child.process.once("close", (code) => {
          clearTimeout(timer);
          resolve(commandProbeVerdict(command, { code, timedOut, output }));
        });
      }),
    (e: Error) => commandProbeVerdict(command, { code: 127, timedOut: false, output: e.message }),
  );
}
