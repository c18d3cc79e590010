import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A PostgreSQL cluster of a test's own, on a free port, for what must never be done to the
 * shared server on 5432: restarts, kills, failover. Made with the server's own initdb and
 * pg_ctl as the `postgres` user, removed by `destroy()`. A cluster left by a test run that was
 * killed is stopped and removed the next time one is made.
 */
export interface PrivatePg {
  port: number;
  host: string;
  dataDir: string;
  /** A connection URL for database `postgres` (trust auth). */
  url: string;
  start(): void;
  /** Stops the server: `fast` ends sessions cleanly, `immediate` is a crash. */
  stop(mode?: "fast" | "immediate"): void;
  /** Ends recovery: a standby becomes a primary. */
  promote(): void;
  destroy(): void;
}

const PREFIX = "quiesce-pg-";

/** Why no private cluster can be made here (no server binaries, not root), or null. */
export function privatePgUnavailable(): string | null {
  if (process.getuid?.() !== 0)
    return "a private PostgreSQL cluster needs root (to run as postgres)";
  return binDir() === null ? "no PostgreSQL server binaries under /usr/lib/postgresql" : null;
}

function binDir(): string | null {
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return null;
  const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
  for (const v of versions)
    if (existsSync(join(base, v, "bin", "pg_ctl"))) return join(base, v, "bin");
  return null;
}

function asPostgres(bin: string, args: string[]): string {
  return execFileSync("runuser", ["-u", "postgres", "--", join(binDir()!, bin), ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, host, () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
}

/** Stops and removes clusters whose test process is gone. */
function sweepLeftovers(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(tmpdir(), name);
    let owner = 0;
    try {
      owner = Number(readFileSync(join(dir, "owner"), "utf8"));
    } catch {
      /* no owner file: half made */
    }
    if (owner > 0 && existsSync(`/proc/${owner}`)) continue;
    try {
      asPostgres("pg_ctl", ["-D", join(dir, "data"), "-m", "immediate", "-w", "stop"]);
    } catch {
      /* not running */
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `host`: the address to listen on (default loopback; the test fleet uses its bridge's);
 * `allow`: a CIDR whose clients are let in (trust), beside the local ones initdb allows.
 */
export async function makePrivatePg(
  options: { host?: string; conf?: string[]; allow?: string } = {},
): Promise<PrivatePg> {
  sweepLeftovers();
  const host = options.host ?? "127.0.0.1";
  const dirs = newRoot();
  asPostgres("initdb", [
    ...["-D", dirs.dataDir, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"],
  ]);
  if (options.allow)
    appendFileSync(
      join(dirs.dataDir, "pg_hba.conf"),
      `host all all ${options.allow} trust\nhost replication all ${options.allow} trust\n`,
    );
  const port = await freePort(host);
  writeConf(dirs, "postgresql.auto.conf", [
    `port = ${port}`,
    `listen_addresses = '${host}'`,
    `unix_socket_directories = '${dirs.sockets}'`,
    "fsync = off", // a test cluster: nothing here must survive the machine
    ...(options.conf ?? []),
  ]);
  const pg = handle(dirs, host, port);
  pg.start();
  return pg;
}

/**
 * A streaming standby of `primary` (pg_basebackup), on the same address and a port of its own,
 * known to the primary as `name` (its application_name: what synchronous_standby_names names).
 * `promote()` makes it the primary (a failover).
 */
export async function makePrivateStandby(primary: PrivatePg, name: string): Promise<PrivatePg> {
  const dirs = newRoot();
  asPostgres("pg_basebackup", [
    ...["-h", primary.host, "-p", String(primary.port), "-U", "postgres"],
    ...["-D", dirs.dataDir, "-X", "stream", "--no-sync"],
  ]);
  const port = await freePort(primary.host);
  writeFileSync(join(dirs.dataDir, "standby.signal"), "");
  // The copy carries the primary's postgresql.auto.conf: what follows overrides it.
  writeConf(dirs, "postgresql.auto.conf", [
    readFileSync(join(dirs.dataDir, "postgresql.auto.conf"), "utf8").trimEnd(),
    `port = ${port}`,
    `unix_socket_directories = '${dirs.sockets}'`,
    `primary_conninfo = 'host=${primary.host} port=${primary.port} user=postgres application_name=${name}'`,
    "synchronous_standby_names = ''",
  ]);
  const pg = handle(dirs, primary.host, port);
  pg.start();
  return pg;
}

interface ClusterDirs {
  root: string;
  dataDir: string;
  sockets: string;
}

function newRoot(): ClusterDirs {
  const root = mkdtempSync(join(tmpdir(), PREFIX));
  writeFileSync(join(root, "owner"), String(process.pid));
  const dataDir = join(root, "data");
  const sockets = join(root, "sock");
  mkdirSync(dataDir, { mode: 0o700 });
  mkdirSync(sockets);
  for (const d of [root, dataDir, sockets]) chownSync(d, pgUid(), pgGid());
  return { root, dataDir, sockets };
}

const pgUid = () => Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }));
const pgGid = () => Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }));

function writeConf(dirs: ClusterDirs, file: string, lines: string[]): void {
  writeFileSync(join(dirs.dataDir, file), lines.join("\n") + "\n");
  chownSync(join(dirs.dataDir, file), pgUid(), pgGid());
}

function handle({ root, dataDir }: ClusterDirs, host: string, port: number): PrivatePg {
  const logFile = join(root, "server.log");
  const pg: PrivatePg = {
    port,
    host,
    dataDir,
    url: `postgres://postgres@${host}:${port}/postgres`,
    start() {
      asPostgres("pg_ctl", ["-D", dataDir, "-l", logFile, "-w", "-t", "30", "start"]);
    },
    stop(mode = "fast") {
      asPostgres("pg_ctl", ["-D", dataDir, "-m", mode, "-w", "-t", "30", "stop"]);
    },
    promote() {
      asPostgres("pg_ctl", ["-D", dataDir, "-w", "-t", "30", "promote"]);
    },
    destroy() {
      try {
        pg.stop("immediate");
      } catch {
        /* already stopped */
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
  return pg;
}
