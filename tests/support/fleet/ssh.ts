import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { waitFor } from "../cli.js";
import { ALL_HOSTS, addressOf, namespaceOf, type FleetHost } from "./names.js";

/**
 * Real ssh between the fleet's hosts: Debian's sshd in every namespace (as root, under a UTS
 * namespace of its own with the host's name, so that `hostname` on a target names it), a client
 * key and an authorized_keys the fleet generates, and an ssh config file that resolves the
 * hosts' names, so nothing touches /etc/hosts or ~/.ssh. Commands use `ssh -F <config> t1 ...`.
 */
export interface FleetSsh {
  /** The client config: pass it as `ssh -F CONFIG`. */
  config: string;
  /** sshd pids by host. */
  pids: Map<FleetHost, number>;
}

export function sshUnavailable(): string | null {
  for (const tool of ["/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/ssh-keygen"])
    if (spawnSync("test", ["-x", tool]).status !== 0) return `${tool} is missing (openssh-server)`;
  return null;
}

function keygen(file: string): void {
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "qf-fleet", "-f", file]);
}

function sshdConfig(dir: string, host: FleetHost, authorized: string): string {
  return `ListenAddress ${addressOf(host)}
Port 22
HostKey ${join(dir, "host_key")}
PidFile ${join(dir, "sshd.pid")}
AuthorizedKeysFile ${authorized}
StrictModes no
PermitRootLogin prohibit-password
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PrintMotd no
UseDNS no
MaxStartups 200
MaxSessions 100
LogLevel ERROR
`;
}

function clientConfig(key: string): string {
  const hosts = ALL_HOSTS.map((h) => `Host ${h}\n  HostName ${addressOf(h)}\n`).join("");
  return `${hosts}
Host *
  User root
  IdentityFile ${key}
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  GlobalKnownHostsFile /dev/null
  BatchMode yes
  LogLevel ERROR
  ConnectTimeout 3
  # The default post-quantum exchange costs several times the CPU of curve25519; the fleet
  # opens an ssh connection per patch, check and probe on a machine of two cores.
  KexAlgorithms curve25519-sha256
`;
}

function portOpen(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: address, port: 22, timeout: 500 });
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("error", () => resolve(false));
    s.once("timeout", () => (s.destroy(), resolve(false)));
  });
}

/** Generates the keys, starts sshd on every host and waits until each accepts connections. */
export async function startSsh(root: string): Promise<FleetSsh> {
  const sshDir = join(root, "ssh");
  mkdirSync(sshDir, { recursive: true });
  mkdirSync("/run/sshd", { recursive: true }); // sshd's privilege separation directory
  const key = join(sshDir, "client_key");
  keygen(key);
  const authorized = join(sshDir, "authorized_keys");
  writeFileSync(authorized, readFileSync(`${key}.pub`));
  const config = join(sshDir, "config");
  writeFileSync(config, clientConfig(key));
  const pids = new Map<FleetHost, number>();
  for (const host of ALL_HOSTS) {
    const dir = join(root, "hosts", host);
    mkdirSync(dir, { recursive: true });
    keygen(join(dir, "host_key"));
    const conf = join(dir, "sshd_config");
    writeFileSync(conf, sshdConfig(dir, host, authorized));
    const child = spawn(
      "ip",
      [
        ...["netns", "exec", namespaceOf(host), "unshare", "--uts", "sh", "-c"],
        'hostname "$1"; exec /usr/sbin/sshd -D -f "$2" -E "$3"',
        ...["sh", host, conf, join(dir, "sshd.log")],
      ],
      { stdio: "ignore", detached: true },
    );
    child.unref();
    pids.set(host, child.pid!);
  }
  for (const host of ALL_HOSTS)
    await waitFor(`sshd on ${host}`, () => portOpen(addressOf(host)), 10_000);
  return { config, pids };
}
