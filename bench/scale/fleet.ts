/** The simulated agent hosts of bench/scale: keeper processes driven over IPC. */
import { fork, type ChildProcess } from "node:child_process";
import { nextMessage as nextChildMessage } from "../lib/child-message.js";
import { fileURLToPath } from "node:url";
import type { KeeperCommand, KeeperMessage, KeeperSnapshot } from "./keeper.js";

const KEEPER = fileURLToPath(new URL("./keeper.js", import.meta.url));

export class KeeperFleet {
  private constructor(
    private readonly children: ChildProcess[],
    /** Each child's application name in pg_stat_activity. */
    readonly apps: string[],
  ) {}

  static async start(
    procs: number,
    storeUrl: string,
    prefix: string,
    ttl: string,
    heartbeat: string,
  ): Promise<KeeperFleet> {
    const children = Array.from({ length: procs }, (_, i) =>
      fork(KEEPER, [storeUrl, `${prefix}-${i}`, ttl, heartbeat], {
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      }),
    );
    const ready = await Promise.all(children.map((c) => next(c, "ready", 30_000)));
    return new KeeperFleet(
      children,
      ready.map((r) => r.applicationName),
    );
  }

  /** Acquires leases until the fleet holds `total`, spread evenly; returns the wall time. */
  async grow(total: number): Promise<number> {
    const n = this.children.length;
    const replies = this.children.map((c, i) => {
      const reply = next(c, "grown", 600_000);
      const share = Math.floor(total / n) + (i < total % n ? 1 : 0);
      c.send({ cmd: "grow", total: share } satisfies KeeperCommand);
      return reply;
    });
    return Math.max(...(await Promise.all(replies)).map((r) => r.ms));
  }

  snapshot(): Promise<KeeperSnapshot[]> {
    return Promise.all(
      this.children.map(async (c) => {
        const reply = next(c, "snapshot", 10_000);
        c.send({ cmd: "snapshot" } satisfies KeeperCommand);
        return (await reply).snap;
      }),
    );
  }

  /** Exits every keeper without releasing its leases (the schema is dropped afterwards). */
  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(async (c) => {
        if (c.exitCode !== null || c.signalCode !== null) return;
        const exited = new Promise((resolve) => c.once("exit", resolve));
        c.send({ cmd: "exit" } satisfies KeeperCommand);
        await exited;
      }),
    );
  }
}

function next<T extends KeeperMessage["type"]>(
  child: ChildProcess,
  type: T,
  timeoutMs: number,
): Promise<Extract<KeeperMessage, { type: T }>> {
  return nextChildMessage<KeeperMessage, T>(child, "keeper", type, timeoutMs);
}
