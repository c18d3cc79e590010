import { execFileSync, spawnSync } from "node:child_process";
import {
  ALL_HOSTS,
  BRIDGE,
  PREFIX,
  STORE_ADDRESS,
  addressOf,
  linksOf,
  namespaceOf,
  type FleetHost,
} from "./names.js";

/**
 * The fleet's network: one namespace per host, each joined to a bridge in the root namespace by
 * a veth pair. No namespace gets a default route: the hosts reach each other and the bridge's
 * address (the store), nothing else.
 */

function ip(...args: string[]): void {
  execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
}

/** Namespaces and links with the fleet's prefix (what a killed run may have left). */
export function leftoverNamespaces(): string[] {
  const r = spawnSync("ip", ["netns", "list"], { encoding: "utf8" });
  return r.stdout
    .split("\n")
    .map((l) => l.split(" ")[0]!)
    .filter((n) => n.startsWith(PREFIX));
}

function leftoverLinks(): string[] {
  const r = spawnSync("ip", ["-o", "link", "show"], { encoding: "utf8" });
  return r.stdout
    .split("\n")
    .map((l) => /^\d+: ([^:@]+)/.exec(l)?.[1] ?? "")
    .filter((n) => n.startsWith(PREFIX));
}

/** Pids of every process in one of the fleet's namespaces. */
export function processesIn(namespace: string): number[] {
  const r = spawnSync("ip", ["netns", "pids", namespace], { encoding: "utf8" });
  return r.stdout
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .filter((p) => p > 0 && p !== process.pid);
}

/**
 * Removes everything with the fleet's prefix: the processes inside its namespaces (a namespace
 * stays alive while a process uses it, so they go first), the namespaces, the links.
 */
export function removeNetwork(): void {
  for (const ns of leftoverNamespaces()) {
    for (const pid of processesIn(ns)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
    spawnSync("ip", ["netns", "del", ns]);
  }
  for (const link of leftoverLinks()) spawnSync("ip", ["link", "del", link]);
}

function addHost(host: FleetHost): void {
  const ns = namespaceOf(host);
  const { outside, inside } = linksOf(host);
  ip("netns", "add", ns);
  ip("link", "add", outside, "type", "veth", "peer", "name", inside);
  ip("link", "set", inside, "netns", ns);
  ip("link", "set", outside, "master", BRIDGE);
  ip("link", "set", outside, "up");
  ip("-n", ns, "addr", "add", `${addressOf(host)}/24`, "dev", inside);
  ip("-n", ns, "link", "set", inside, "up");
  ip("-n", ns, "link", "set", "lo", "up");
}

export function makeNetwork(): void {
  removeNetwork();
  ip("link", "add", BRIDGE, "type", "bridge");
  ip("addr", "add", `${STORE_ADDRESS}/24`, "dev", BRIDGE);
  ip("link", "set", BRIDGE, "up");
  for (const h of ALL_HOSTS) addHost(h);
}

/** Cuts or restores a host's only link (a partition: the host lives on, unreachable). */
export function setLink(host: FleetHost, up: boolean): void {
  ip("link", "set", linksOf(host).outside, up ? "up" : "down");
}
