import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startProcess, type CliProcess } from "../cli.js";
import { CLI } from "../paths.js";
import { makePrivatePg, privatePgUnavailable, type PrivatePg } from "../private-pg.js";
import { makeNetwork, removeNetwork, setLink } from "./network.js";
import {
  PREFIX,
  STORE_ADDRESS,
  SUBNET,
  TARGET_HOSTS,
  namespaceOf,
  type ControlHost,
  type FleetHost,
  type TargetHost,
} from "./names.js";
import { sshUnavailable, startSsh } from "./ssh.js";
import { judgeTarget, writeTargetScripts, type TargetVerdict } from "./targets.js";

/**
 * The test fleet: two control hosts and six targets, each a network namespace with its own
 * address and sshd, and a private PostgreSQL on the bridge. One fleet at a time per machine
 * (the names are fixed); a fleet whose test process is gone is removed by the next one.
 */
export interface Fleet {
  root: string;
  pg: PrivatePg;
  /** The store every agent uses, on the bridge address. */
  storeUrl: string;
  /** `ssh -F <this>` resolves the hosts' names. */
  sshConfig: string;
  /** `--patch`: the target's patch script over ssh, with the host lease's token. */
  patchCommand(seconds?: number): string;
  /** `--check`: the target's check script over ssh. */
  checkCommand: string;
  /** `--probe`: proof of death over ssh on the owner's host. */
  probeCommand: string;
  /** `--via`: the ssh prefix that runs a command on a target (under quiesce's remote guard). */
  via: string;
  /** `--patch` with `--via`: the target's patch script, run on the target itself. */
  remotePatch(seconds?: number): string;
  /** `--check` with `--via`. */
  remoteCheck: string;
  /** Starts `quiesce ARGS` on a control host (optionally under `faketime -f OFFSET`). */
  startOn(host: ControlHost, args: readonly string[], o?: { faketime?: string }): CliProcess;
  /** Takes a host's only link down (a partition: the host runs on, unreachable) or up. */
  setLink(host: FleetHost, up: boolean): void;
  /** Runs a shell command inside a host's namespace (not as quiesce). */
  shell(host: FleetHost, command: string): { code: number | null; output: string };
  /** A target's own patch record (see targets.ts). */
  recordOf(host: TargetHost): string;
  /** What every target's own record says. */
  judge(): TargetVerdict[];
  destroy(): void;
}

const ROOT_PREFIX = `${PREFIX}fleet-`;

/** Why no fleet can be built here, or null. */
export function fleetUnavailable(): string | null {
  if (process.platform !== "linux") return "the test fleet needs Linux network namespaces";
  if (process.getuid?.() !== 0) return "the test fleet needs root (ip netns, sshd)";
  for (const tool of ["ip", "unshare", "faketime", "runuser"])
    if (spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0) return `${tool} is missing`;
  return sshUnavailable() ?? privatePgUnavailable();
}

/** Skip reason for a fleet test, or false to run it. Under CI=true a missing tool fails. */
export function fleetSkip(): string | false {
  const why = fleetUnavailable();
  if (why === null) return false;
  if (process.env.CI === "true") throw new Error(`${why} (CI=true: the fleet tests may not skip)`);
  return why;
}

/** Removes what a killed fleet left; refuses while the fleet of a live process exists. */
function sweep(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(ROOT_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    const owner = Number(
      existsSync(join(dir, "owner")) ? readFileSync(join(dir, "owner"), "utf8") : 0,
    );
    if (owner > 0 && owner !== process.pid && existsSync(`/proc/${owner}`))
      throw new Error(`another test fleet is up (process ${owner}, ${dir}): one at a time`);
    rmSync(dir, { recursive: true, force: true });
  }
  removeNetwork();
}

export async function makeFleet(o: { patchSeconds?: number } = {}): Promise<Fleet> {
  sweep();
  const root = mkdtempSync(join(tmpdir(), ROOT_PREFIX));
  writeFileSync(join(root, "owner"), String(process.pid));
  let pg: PrivatePg | null = null;
  const destroy = () => {
    removeNetwork(); // every sshd and every process started on a host goes with its namespace
    pg?.destroy();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    makeNetwork();
    pg = await makePrivatePg({ host: STORE_ADDRESS, allow: SUBNET });
    const { config } = await startSsh(root);
    const scripts = writeTargetScripts(root, o.patchSeconds ?? 1);
    const ssh = `ssh -F ${config}`;
    return {
      root,
      pg,
      storeUrl: `${pg.url}?schema=fleet`,
      sshConfig: config,
      patchCommand: (seconds) =>
        `${ssh} {host} ${scripts.patch} {host} $QUIESCE_FENCING_TOKEN${seconds === undefined ? "" : ` ${seconds}`}`,
      checkCommand: `${ssh} {host} ${scripts.check} {host}`,
      probeCommand: `${ssh} {host} kill -0 {pid}`,
      via: `${ssh} {host}`,
      remotePatch: (seconds) =>
        `${scripts.patch} {host} "$QUIESCE_FENCING_TOKEN"${seconds === undefined ? "" : ` ${seconds}`}`,
      remoteCheck: `${scripts.check} {host}`,
      startOn(host, args, opts = {}) {
        const time = opts.faketime ? ["faketime", "-f", opts.faketime] : [];
        return startProcess(
          "ip",
          [
            ...["netns", "exec", namespaceOf(host), "unshare", "--uts", "sh", "-c"],
            // Each control host has its own name: the local-process probe must not take
            // ctl-a's pids for ctl-b's (ip netns exec shares the UTS namespace).
            'hostname "$1"; shift; exec "$@"',
            ...["sh", host, ...time, process.execPath, CLI, ...args],
          ],
          {
            QUIESCE_OUTBOX_DIR: join(root, "outbox", host),
            // libfaketime shifts CLOCK_MONOTONIC too unless told not to; quiesce's timers and
            // its self-fencing deadline are monotonic and must stay real.
            ...(opts.faketime ? { FAKETIME_DONT_FAKE_MONOTONIC: "1" } : {}),
          },
        );
      },
      setLink,
      shell(host, command) {
        const r = spawnSync("ip", ["netns", "exec", namespaceOf(host), "sh", "-c", command], {
          encoding: "utf8",
        });
        return { code: r.status, output: r.stdout + r.stderr };
      },
      recordOf: scripts.recordOf,
      judge: () => TARGET_HOSTS.map((h) => judgeTarget(h, scripts.recordOf(h))),
      destroy,
    };
  } catch (e) {
    destroy();
    throw e;
  }
}
