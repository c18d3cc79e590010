/**
 * The fleet's names and addresses. Everything the fleet makes carries the `qf-` prefix (network
 * namespaces, links, the temp directory), so that a run that was killed can be cleaned up by the
 * next one without touching anything else; addresses come from 10.231.0.0/24, a range the fleet
 * creates on a bridge of its own and never routes anywhere.
 */
export const PREFIX = "qf-";
export const BRIDGE = `${PREFIX}br`;
export const SUBNET = "10.231.0.0/24";
/** The bridge's address in the root namespace: where the fleet's PostgreSQL listens. */
export const STORE_ADDRESS = "10.231.0.1";

export const CONTROL_HOSTS = ["ctl-a", "ctl-b"] as const;
export const TARGET_HOSTS = ["t1", "t2", "t3", "t4", "t5", "t6"] as const;
export type ControlHost = (typeof CONTROL_HOSTS)[number];
export type TargetHost = (typeof TARGET_HOSTS)[number];
export type FleetHost = ControlHost | TargetHost;
export const ALL_HOSTS: readonly FleetHost[] = [...CONTROL_HOSTS, ...TARGET_HOSTS];

const ADDRESSES: Record<FleetHost, string> = {
  "ctl-a": "10.231.0.21",
  "ctl-b": "10.231.0.22",
  t1: "10.231.0.11",
  t2: "10.231.0.12",
  t3: "10.231.0.13",
  t4: "10.231.0.14",
  t5: "10.231.0.15",
  t6: "10.231.0.16",
};

export function addressOf(host: FleetHost): string {
  return ADDRESSES[host];
}

/** The network namespace that is `host`. */
export function namespaceOf(host: FleetHost): string {
  return `${PREFIX}${host}`;
}

/** The two ends of a host's veth pair: one on the bridge (root namespace), one inside. Linux
 * limits link names to 15 characters. */
export function linksOf(host: FleetHost): { outside: string; inside: string } {
  return { outside: `${PREFIX}v-${host}`, inside: `${PREFIX}i-${host}` };
}
