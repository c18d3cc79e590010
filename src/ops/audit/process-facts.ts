import { readFileSync } from "node:fs";
import type { PidFacts } from "../../domain/legacy-lock.js";
import { parseProcLocks, type ProcLocks } from "../../domain/proc-locks.js";

/**
 * What /proc says about a pid: running or not (a zombie is not), and since when. The start
 * time is field 22 of /proc/PID/stat (clock ticks since boot, USER_HZ = 100 on every Linux
 * architecture Node runs on) plus the boot time from /proc/stat's `btime`.
 */
const TICKS_PER_SECOND = 100;

export class ProcFacts {
  private bootMs: number | null | undefined;
  private locks: ProcLocks | undefined;

  constructor(private readonly proc = "/proc") {}

  pid(pid: number): PidFacts {
    let stat: string;
    try {
      stat = readFileSync(`${this.proc}/${pid}/stat`, "utf8");
    } catch {
      return { alive: false };
    }
    // The command name (field 2) is in parentheses and may hold spaces or ')'.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (rest[0] === "Z" || rest[0] === "X") return { alive: false };
    const ticks = Number(rest[19]);
    const boot = this.bootTimeMs();
    const startedAt =
      boot === null || !Number.isFinite(ticks) ? null : boot + (ticks * 1000) / TICKS_PER_SECOND;
    return { alive: true, startedAt };
  }

  /** Held locks by inode; read once per audit (empty where /proc/locks cannot be read). */
  heldLocks(): ProcLocks {
    if (this.locks === undefined) {
      try {
        this.locks = parseProcLocks(readFileSync(`${this.proc}/locks`, "utf8"));
      } catch {
        this.locks = new Map();
      }
    }
    return this.locks;
  }

  private bootTimeMs(): number | null {
    if (this.bootMs === undefined) {
      try {
        const m = /^btime\s+(\d+)$/m.exec(readFileSync(`${this.proc}/stat`, "utf8"));
        this.bootMs = m ? Number(m[1]) * 1000 : null;
      } catch {
        this.bootMs = null;
      }
    }
    return this.bootMs;
  }
}
