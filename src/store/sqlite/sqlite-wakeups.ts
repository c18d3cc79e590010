import {
  chmodSync,
  closeSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  statSync,
  watch,
  writeSync,
  type FSWatcher,
} from "node:fs";
import { WakeBoard } from "../wake-board.js";
import type { ScopeWatch } from "../store.js";

/** The wake file is emptied by the writer that finds it longer than this. */
const WAKE_FILE_MAX = 16 * 1024;

/**
 * Wake-ups for waiters on one SQLite store, across the processes of this host: a file beside
 * the store (`PATH-wake`) that a releasing process appends a line to after its commit, and that
 * waiting processes watch (inotify on Linux: the write wakes them within a fraction of a
 * millisecond). A line is the ticket first in line (only that waiter re-reads) or `*` (every
 * waiter re-reads: an expiry noted, a waiter leaving). Each watching process reads the lines
 * added since it last looked; a file that got shorter (emptied by a writer, or written by an
 * older quiesce) wakes everyone. The file needs no fsync: losing a line loses a hint, which
 * costs a waiter its safety poll, never correctness. Every failure here (no permission, no
 * inotify, an in-memory store) degrades to polling.
 */
export class SqliteWakeups {
  readonly path: string | null;
  private watcher: FSWatcher | null = null;
  /** The watching side: the wake file, open for reading, and how far it has been read. */
  private reader: { fd: number; offset: number } | null = null;
  private readonly board: WakeBoard;
  private created = false;

  constructor(
    dbPath: string,
    private readonly readOnly: boolean,
  ) {
    this.path = dbPath === ":memory:" || dbPath === "" ? null : `${dbPath}-wake`;
    this.board = new WakeBoard(
      () => this.watcher !== null,
      (active) => (active ? this.start() : this.stop()),
    );
  }

  watch(scope: string): ScopeWatch {
    return this.board.watch(scope);
  }

  /**
   * After a commit that may let a waiter in: wake the waiter holding `ticket` (first in line)
   * or, with "all", every waiter; in this process and in the others.
   */
  signal(target: number | "all"): void {
    if (target === "all") this.board.hintAll();
    else this.board.hintTicket(target);
    if (this.path === null || this.readOnly) return;
    try {
      const fd = openSync(this.path, "a");
      try {
        writeSync(fd, `${target === "all" ? "*" : target}\n`);
        // Emptied now and then; readers take a shorter file as a hint for everyone.
        if (fstatSync(fd).size > WAKE_FILE_MAX) ftruncateSync(fd, 0);
      } finally {
        closeSync(fd);
      }
      this.adoptMode();
    } catch {
      /* cannot write the hint: waiters will see the release on their next poll */
    }
  }

  /** The lines appended since the last look, as hints; anything unexpected wakes everyone. */
  private readHints(): void {
    const r = this.reader;
    if (!r) return this.board.hintAll();
    try {
      const size = fstatSync(r.fd).size;
      if (size < r.offset) {
        r.offset = size;
        return this.board.hintAll();
      }
      if (size === r.offset) return;
      const buf = Buffer.allocUnsafe(Math.min(size - r.offset, WAKE_FILE_MAX * 2));
      const n = readSync(r.fd, buf, 0, buf.length, r.offset);
      // A line still being written is read next time.
      const end = buf.lastIndexOf(0x0a, n - 1);
      if (end < 0) return;
      r.offset += end + 1;
      for (const line of buf.toString("latin1", 0, end).split("\n")) {
        const ticket = Number(line);
        if (line === "" || !Number.isSafeInteger(ticket)) this.board.hintAll();
        else this.board.hintTicket(ticket);
      }
    } catch {
      this.board.hintAll();
    }
  }

  /** The wake file takes the store's permissions, so whoever may write the store may wake. */
  private adoptMode(): void {
    if (this.created || this.path === null) return;
    this.created = true;
    try {
      const dbMode = statSync(this.path.slice(0, -"-wake".length)).mode & 0o666;
      if ((statSync(this.path).mode & 0o666) !== dbMode) chmodSync(this.path, dbMode);
    } catch {
      /* not ours to change: fine */
    }
  }

  private start(): void {
    if (this.path === null || this.watcher) return;
    try {
      if (!this.readOnly) {
        closeSync(openSync(this.path, "a"));
        this.adoptMode();
      }
      const fd = openSync(this.path, "r");
      this.reader = { fd, offset: fstatSync(fd).size };
      const w = watch(this.path, { persistent: false }, () => this.readHints());
      w.on("error", () => {
        w.close();
        if (this.watcher === w) this.stop();
      });
      this.watcher = w;
    } catch {
      this.stop(); // no wake file (read-only store never written) or no inotify: poll
    }
  }

  private stop(): void {
    this.watcher?.close();
    this.watcher = null;
    if (this.reader) closeSync(this.reader.fd);
    this.reader = null;
  }

  close(): void {
    this.stop();
  }
}
