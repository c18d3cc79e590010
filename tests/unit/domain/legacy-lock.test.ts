import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  failsAudit,
  judgeLock,
  LockKind,
  lockKindOf,
  pidFromText,
  Verdict,
  type LockFacts,
} from "../../../src/domain/legacy-lock.js";
import { devMajorMinor, inodeKey, parseProcLocks } from "../../../src/domain/proc-locks.js";

describe("lockKindOf: which entries are legacy locks", () => {
  const cases: [string, boolean, string | null][] = [
    ["backup.lock", false, LockKind.LOCK],
    ["db.LCK", false, LockKind.LOCK],
    ["LOCK", false, LockKind.LOCK],
    ["sshd.pid", false, LockKind.PID],
    ["maintenance", false, LockKind.FLAG],
    ["site-maintenance.on", false, LockKind.FLAG],
    ["deploy.flag", false, LockKind.FLAG],
    ["job.lock", true, LockKind.LOCK_DIR],
    ["LOCK", true, LockKind.LOCK_DIR],
    ["locks", true, null],
    ["maintenance", true, null],
    ["backup.lock.bak", false, null],
    ["unlock.sh", false, null],
    ["notes.txt", false, null],
  ];
  for (const [name, dir, kind] of cases)
    test(`${dir ? "directory" : "file"} ${name}: ${kind ?? "not a lock"}`, () =>
      assert.equal(lockKindOf(name, dir), kind));
});

describe("pidFromText: the pid a lock file names", () => {
  const cases: [string, number | null][] = [
    ["4121", 4121],
    ["4121\n", 4121],
    ["  4121 db-7\n", 4121],
    ["pid=4121\n", 4121],
    ["PID: 77", 77],
    ["4121\nsecond line 99", 4121],
    ["", null],
    ["\n4121", null],
    ["locked by backup", null],
    ["0", null],
    ["99999999", null],
    ["4121abc", null],
    ["-5", null],
  ];
  for (const [text, pid] of cases)
    test(`${JSON.stringify(text)} -> ${pid}`, () => assert.equal(pidFromText(text), pid));
});

describe("judgeLock: live, stale or unknown, with one sentence of evidence", () => {
  const now = 1_000_000_000;
  const written = now - 3_600_000;
  const base: LockFacts = {
    kind: LockKind.LOCK,
    mtimeMs: written,
    pid: null,
    process: null,
    holder: null,
  };
  const cases: [string, Partial<LockFacts>, string, RegExp][] = [
    [
      "held with flock, whatever it contains",
      { holder: { type: "FLOCK", pid: 42 }, pid: 7, process: { alive: false } },
      Verdict.LIVE,
      /^held with flock by process 42 \(per \/proc\/locks\)$/,
    ],
    [
      "an fcntl lock",
      { holder: { type: "POSIX", pid: 43 } },
      Verdict.LIVE,
      /^held with an fcntl lock by process 43/,
    ],
    [
      "an OFD lock (no pid)",
      { holder: { type: "OFDLCK", pid: -1 } },
      Verdict.LIVE,
      /by an open file description/,
    ],
    [
      "pid running since before the file was written",
      { pid: 7, process: { alive: true, startedAt: written - 5000 } },
      Verdict.LIVE,
      /^pid 7 is running and started before the file was written$/,
    ],
    [
      "pid started within the tolerance after the write (boot time is to the second)",
      { pid: 7, process: { alive: true, startedAt: written + 1500 } },
      Verdict.LIVE,
      /started before/,
    ],
    [
      "pid running, start time unreadable",
      { pid: 7, process: { alive: true, startedAt: null } },
      Verdict.LIVE,
      /could not be read/,
    ],
    [
      "pid gone",
      { pid: 7, process: { alive: false } },
      Verdict.STALE,
      /^pid 7 is not running \(written 1h00m ago\)$/,
    ],
    [
      "pid reused by a younger process",
      { pid: 7, process: { alive: true, startedAt: written + 600_000 } },
      Verdict.STALE,
      /^pid 7 was reused: that process started 10m00s after the file was written$/,
    ],
    [
      "no pid, no holder",
      {},
      Verdict.UNKNOWN,
      /^no pid inside and no process holds it; the file is 1h00m old$/,
    ],
    [
      "a lock directory with no pid",
      { kind: LockKind.LOCK_DIR },
      Verdict.UNKNOWN,
      /the directory is 1h00m old/,
    ],
  ];
  for (const [name, facts, verdict, evidence] of cases)
    test(name, () => {
      const j = judgeLock({ ...base, ...facts }, now);
      assert.equal(j.verdict, verdict);
      assert.match(j.evidence, evidence);
    });

  test("only stale or unknown locks that nobody accepted fail the audit", () => {
    assert.equal(failsAudit(Verdict.LIVE, false), false);
    assert.equal(failsAudit(Verdict.STALE, false), true);
    assert.equal(failsAudit(Verdict.UNKNOWN, false), true);
    assert.equal(failsAudit(Verdict.STALE, true), false);
    assert.equal(failsAudit(Verdict.UNKNOWN, true), false);
  });
});

describe("/proc/locks", () => {
  const text = [
    "1: FLOCK  ADVISORY  WRITE 4121 fe:00:2147582 0 EOF",
    "1: -> FLOCK  ADVISORY  WRITE 5000 fe:00:2147582 0 EOF",
    "2: POSIX  ADVISORY  READ 3784 08:11:1466568 0 EOF",
    "3: OFDLCK ADVISORY  WRITE -1 00:2c:99 0 EOF",
    "garbage",
    "",
  ].join("\n");
  test("holders by device and inode; waiters hold nothing", () => {
    const m = parseProcLocks(text);
    assert.deepEqual(m.get(inodeKey(0xfe, 0, 2147582)), { type: "FLOCK", pid: 4121 });
    assert.deepEqual(m.get(inodeKey(8, 0x11, 1466568)), { type: "POSIX", pid: 3784 });
    assert.deepEqual(m.get(inodeKey(0, 0x2c, 99)), { type: "OFDLCK", pid: -1 });
    assert.equal(m.size, 3);
  });
  const devs: [bigint, number, number][] = [
    [0xfe00n, 0xfe, 0],
    [0x811n, 8, 0x11],
    [0x2cn, 0, 0x2c],
    [(0x103n << 8n) | 0x5n | (0x12n << 20n), 0x103, 0x1205],
  ];
  for (const [dev, major, minor] of devs)
    test(`dev ${dev} is ${major}:${minor}`, () =>
      assert.deepEqual(devMajorMinor(dev), { major, minor }));
});
