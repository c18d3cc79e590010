import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TARGET_HOSTS, type TargetHost } from "./names.js";

/**
 * What the targets themselves know: each target host keeps its own patch record,
 * `<fleet>/hosts/<host>/record`, written by the patch script as it runs there over ssh:
 * `start <epoch ms> <host> <token>` and `end <epoch ms> <host> <token>`. The host is the
 * target's own `hostname` (its sshd runs in a UTS namespace of its own), so a patch that
 * reached the wrong host says so; the token is the patching agent's fencing token, filled in on
 * the control host before ssh runs. The scenarios are judged from these records alone.
 */
export interface TargetScripts {
  /** `patch.sh HOST TOKEN [SECONDS]`: refuses (exit 9) to run on another host than HOST. */
  patch: string;
  /** `check.sh HOST`: 0 patched (a finished patch is recorded), 1 not. */
  check: string;
  recordOf: (host: TargetHost) => string;
}

export function writeTargetScripts(root: string, patchSeconds: number): TargetScripts {
  const hosts = join(root, "hosts");
  for (const h of TARGET_HOSTS) mkdirSync(join(hosts, h), { recursive: true });
  const patch = join(root, "patch.sh");
  writeFileSync(
    patch,
    `#!/bin/sh
me=$(hostname)
[ "$1" = "$me" ] || { echo "a patch for $1 reached $me" >&2; exit 9; }
rec=${hosts}/$me/record
echo "start $(date +%s%3N) $me $2" >> "$rec"
# Stopped (TERM): its last act is this line, so the record says when it stopped acting.
trap 'echo "stop $(date +%s%3N) $me $2" >> "$rec"; exit 143' TERM
sleep "\${3:-${patchSeconds}}"
echo "end $(date +%s%3N) $me $2" >> "$rec"
echo "patched $me under token $2"
`,
  );
  const check = join(root, "check.sh");
  writeFileSync(
    check,
    `#!/bin/sh
me=$(hostname)
[ "$1" = "$me" ] || exit 9
grep -q '^end ' ${hosts}/$me/record 2>/dev/null && exit 0
exit 1
`,
  );
  chmodSync(patch, 0o755);
  chmodSync(check, 0o755);
  return { patch, check, recordOf: (h) => join(hosts, h, "record") };
}

/**
 * One patch as the target recorded it; `end` is null while it runs or if it was stopped:
 * `stopped` says when a TERM ended it (its last act), null if it was not (or was KILLed).
 */
export interface RecordedPatch {
  host: string;
  token: number;
  start: number;
  end: number | null;
  stopped: number | null;
}

export function readRecord(file: string): RecordedPatch[] {
  if (!existsSync(file)) return [];
  const patches: RecordedPatch[] = [];
  for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean)) {
    const [kind, at, host, token] = line.split(" ");
    if (kind === "start")
      patches.push({
        host: host!,
        token: Number(token),
        start: Number(at),
        end: null,
        stopped: null,
      });
    else {
      // The earliest open patch of this token ends (or was stopped) here.
      const open = patches.find(
        (p) => p.end === null && p.stopped === null && p.token === Number(token),
      );
      if (open && kind === "end") open.end = Number(at);
      if (open && kind === "stop") open.stopped = Number(at);
    }
  }
  return patches;
}

/** The verdict on one target: how often it was patched, and whether two patches overlapped. */
export interface TargetVerdict {
  host: TargetHost;
  patches: RecordedPatch[];
  started: number;
  finished: number;
  /** Pairs of patches whose time spans intersect (one neither finished nor stopped lasts
   * until now). */
  overlaps: [RecordedPatch, RecordedPatch][];
  /** Patches recorded under another hostname than the target's own. */
  misdirected: RecordedPatch[];
}

export function judgeTarget(host: TargetHost, file: string, now = Date.now()): TargetVerdict {
  const patches = readRecord(file);
  const overlaps: [RecordedPatch, RecordedPatch][] = [];
  for (let i = 0; i < patches.length; i++)
    for (let j = i + 1; j < patches.length; j++) {
      const a = patches[i]!;
      const b = patches[j]!;
      const endA = a.end ?? a.stopped ?? now;
      const endB = b.end ?? b.stopped ?? now;
      if (a.start < endB && b.start < endA) overlaps.push([a, b]);
    }
  return {
    host,
    patches,
    started: patches.length,
    finished: patches.filter((p) => p.end !== null).length,
    overlaps,
    misdirected: patches.filter((p) => p.host !== host),
  };
}
