import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { EventInput } from "../domain/event.js";
import { sha256Hex } from "../domain/sha256.js";
import { defaultSqlitePath } from "../store/open-store.js";
import type { Store } from "../store/store.js";

/**
 * Events a holder must not lose although the store may be the very thing that failed: a lease
 * given up as lost is usually given up because the store could not be reached. An event that
 * cannot be written now stays in memory and is retried (with backoff) while the process lives;
 * what is still unwritten when the process closes the store goes to a local spool file, which
 * the next quiesce process on this host that opens the same store writes out first. So every
 * loss ends up in the log, stamped late, with the holder's own time of it in `detail.at`.
 */
export class EventOutbox {
  private readonly pending: EventInput[] = [];
  private timer: NodeJS.Timeout | null = null;
  private delayMs = 250;
  private inFlight: Promise<void> | null = null;

  /** `spoolFile`: where to spool (null: nowhere); by default, the store's (spoolPathFor). */
  constructor(
    private readonly store: Store,
    private spoolFileGiven?: string | null,
  ) {}

  // Named on first use: the name hashes the store's location with node:crypto, which costs a
  // `quiesce run` about 4 ms to load (bench/startup.ts), and most processes never spool.
  private get spoolFile(): string | null {
    return (this.spoolFileGiven ??= spoolPathFor(this.store));
  }

  /** Writes the event now, or keeps it until the store answers. Never throws. */
  deliver(event: EventInput): Promise<void> {
    this.pending.push(event);
    return this.drain();
  }

  get size(): number {
    return this.pending.length;
  }

  /** Tries what is pending once more, for at most `timeoutMs`. */
  async flush(timeoutMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.drain(), new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
  }

  /** Stops retrying; what is still pending goes to the spool file for the next process. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const left = this.pending.splice(0);
    if (left.length === 0 || this.spoolFile === null) return;
    try {
      mkdirSync(dirname(this.spoolFile), { recursive: true, mode: 0o700 });
      appendFileSync(this.spoolFile, left.map((e) => `${JSON.stringify(e)}\n`).join(""), {
        mode: 0o600,
      });
    } catch {
      /* nowhere to keep them: they are lost with this process, as before the outbox */
    }
  }

  /** Writes out events a previous process left in the spool; returns how many. */
  async replaySpool(): Promise<number> {
    // No spool file in the directory (or no directory): the usual case, answered without
    // naming the file. A replay removes the file it read, so a host that once spooled has an
    // empty directory again.
    if (this.spoolFileGiven === undefined && !hasSpoolFiles(spoolDirFor())) return 0;
    if (this.spoolFile === null) return 0;
    const claimed = `${this.spoolFile}.${process.pid}`;
    try {
      renameSync(this.spoolFile, claimed); // one replayer at a time
    } catch {
      return 0;
    }
    let lines: string[];
    try {
      lines = readFileSync(claimed, "utf8").split("\n").filter(Boolean);
    } finally {
      rmSync(claimed, { force: true });
    }
    let written = 0;
    for (const line of lines) {
      let ev: EventInput;
      try {
        ev = JSON.parse(line) as EventInput;
      } catch {
        continue; // a torn last line of a process killed while appending
      }
      try {
        await this.store.events.record(ev);
        written++;
      } catch {
        this.pending.push(ev);
      }
    }
    if (this.pending.length > 0) this.schedule();
    return written;
  }

  private schedule(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.drain();
    }, this.delayMs);
    this.timer.unref();
    this.delayMs = Math.min(5000, this.delayMs * 2);
  }

  private drain(): Promise<void> {
    // One writer at a time, in order; a later deliver() joins the loop already running.
    this.inFlight ??= (async () => {
      while (this.pending.length > 0) {
        try {
          await this.store.events.record(this.pending[0]!);
          this.pending.shift();
          this.delayMs = 250;
        } catch {
          this.schedule(); // the store is down: try again later, not in a tight loop
          return;
        }
      }
    })().finally(() => {
      this.inFlight = null;
      // An event delivered while the loop was finishing must not wait for the next failure.
      if (this.pending.length > 0 && this.timer === null) void this.drain();
    });
    return this.inFlight;
  }
}

/**
 * One spool file per store (by its password-free location), in QUIESCE_OUTBOX_DIR or an
 * `outbox` directory beside the default store (/var/lib/quiesce for root, else the XDG state
 * directory): on the host that noticed the loss, where its next quiesce process looks.
 */
export function spoolPathFor(
  store: Pick<Store, "location">,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const id = sha256Hex(store.location).slice(0, 16);
  return join(spoolDirFor(env), `${id}.jsonl`);
}

function hasSpoolFiles(dir: string): boolean {
  try {
    return readdirSync(dir).some((name) => name.endsWith(".jsonl"));
  } catch {
    return false; // no directory (or none we may read): nothing was spooled there for us
  }
}

function spoolDirFor(env: NodeJS.ProcessEnv = process.env): string {
  return env.QUIESCE_OUTBOX_DIR || join(dirname(defaultSqlitePath(env)), "outbox");
}
