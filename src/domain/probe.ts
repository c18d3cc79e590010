/**
 * Proof of death: each probe answers alive, dead or unknown, with one sentence of evidence a
 * human can check ("pid 4121 on db-7 is gone", "boot id changed: the host rebooted").
 */
export type ProbeVerdict = "alive" | "dead" | "unknown";

export interface ProbeResult {
  /** heartbeat | local-process | run-activity | command */
  probe: string;
  verdict: ProbeVerdict;
  evidence: string;
}
