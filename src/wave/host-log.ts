import { closeSync, fstatSync, mkdirSync, openSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * One log file per host (`DIR/HOST.log`), appended to by every command run for it, each under
 * a header line. Commands write to the file directly rather than through a pipe to the agent:
 * a patch must not die of SIGPIPE because the agent that started it was killed.
 */
export class HostLog {
  private constructor(
    readonly path: string,
    readonly fd: number,
  ) {}

  static open(dir: string, host: string): HostLog {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `${host}.log`);
    return new HostLog(path, openSync(path, "a", 0o600));
  }

  /** Writes a header and returns the offset where the command's output starts. */
  begin(what: string, command: string): number {
    writeSync(this.fd, `=== ${new Date().toISOString()} ${what}: ${command}\n`);
    return fstatSync(this.fd).size;
  }

  end(line: string): void {
    writeSync(this.fd, `=== ${new Date().toISOString()} ${line}\n`);
  }

  /** The last line the command wrote since `from` (at most 200 characters), or "". */
  lastLine(from: number): string {
    const size = fstatSync(this.fd).size;
    const len = Math.min(4096, size - from);
    if (len <= 0) return "";
    const buf = Buffer.alloc(len);
    const rd = openSync(this.path, "r");
    try {
      readSync(rd, buf, 0, len, size - len);
    } finally {
      closeSync(rd);
    }
    const lines = buf
      .toString("utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean);
    const last = lines[lines.length - 1] ?? "";
    return last.length > 200 ? `${last.slice(0, 197)}...` : last;
  }

  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      /* already closed */
    }
  }
}
