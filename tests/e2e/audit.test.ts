import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { cli, waitFor } from "../support/cli.js";
import { CLI, tempDir } from "../support/paths.js";

interface AuditJson {
  locks: {
    path: string;
    kind: string;
    verdict: string;
    evidence: string;
    pid: number | null;
    ageMs: number;
    accepted: boolean;
    reason: string | null;
    modifiedAt: string;
  }[];
  idioms: { file: string; line: number; idiom: string; suggestion: string }[];
  notes: { path: string; note: string }[];
}

const children: ChildProcess[] = [];
after(() => {
  for (const c of children) {
    try {
      process.kill(-c.pid!, "SIGKILL"); // its whole group: flock's child too
    } catch {
      // already gone
    }
  }
});

/** A live process of our own in its own group (killed after the tests). */
function liveProcess(args = ["sleep", "600"]): ChildProcess {
  const c = spawn(args[0]!, args.slice(1), { stdio: "ignore", detached: true });
  c.unref();
  children.push(c);
  return c;
}

/** Whether /proc/locks lists a lock on this file's inode. */
function lockedInProc(path: string): boolean {
  const ino = String(statSync(path).ino);
  return readFileSync("/proc/locks", "utf8")
    .split("\n")
    .some((l) => l.includes(`:${ino} `) && !l.includes("->"));
}

const deadPid = () =>
  Number(spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The pid a lock file of this test names: a sleeping process started before it was written. */
async function tree() {
  const t = tempDir("quiesce-audit-");
  after(t.cleanup);
  const root = join(t.dir, "root");
  const outside = join(t.dir, "outside");
  mkdirSync(join(root, "cron.d"), { recursive: true });
  mkdirSync(join(root, "system"));
  mkdirSync(outside);
  const live = liveProcess();
  await sleep(50);
  writeFileSync(join(root, "dead.lock"), `${deadPid()}\n`);
  writeFileSync(join(root, "live.pid"), `${live.pid}\n`);
  // A pid written an hour before its process started: the pid was reused.
  writeFileSync(join(root, "reused.pid"), `${live.pid}\n`);
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(join(root, "reused.pid"), hourAgo, hourAgo);
  // Held with flock(1) by a live process; what it contains does not matter.
  writeFileSync(join(root, "held.lock"), `${deadPid()}\n`);
  const holder = liveProcess(["flock", join(root, "held.lock"), "sleep", "600"]);
  await waitFor("flock to hold the file", () => lockedInProc(join(root, "held.lock")));
  writeFileSync(join(root, "maintenance.flag"), "");
  mkdirSync(join(root, "deploy.lock"));
  writeFileSync(join(root, "known.flag"), "");
  // Out of the root: a stale lock reached only through symlinks.
  writeFileSync(join(outside, "ext.lock"), `${deadPid()}\n`);
  symlinkSync(join(outside, "ext.lock"), join(root, "evil.lock"));
  symlinkSync(outside, join(root, "elsewhere"));
  writeFileSync(
    join(root, "backup.sh"),
    [
      "#!/bin/sh",
      "[ -e /var/lock/backup.lock ] && exit 0",
      "touch /var/lock/backup.lock",
      "echo $$ > /var/run/backup.pid",
      "mkdir /tmp/dump.lock || exit 1",
      "lockfile -r 0 /tmp/report.lock",
      "exec 9>/var/lock/nightly.lock",
      "flock -n 9 || exit 1",
      "rm -f /var/lock/backup.lock",
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(root, "cron.d", "sync"),
    "*/5 * * * * root flock -n /var/lock/sync.lock /usr/local/bin/sync --all\n",
  );
  writeFileSync(
    join(root, "system", "app.service"),
    "[Service]\nExecStartPre=/usr/bin/touch /run/app.lock\nExecStart=/usr/local/bin/app --serve\nExecStopPost=/bin/rm -f /run/app.lock\n",
  );
  const config = join(t.dir, "quiesce.yaml");
  writeFileSync(
    config,
    `audit:\n  accept:\n    - path: ${join(root, "known.flag")}\n      reason: set by the CMS during deploys (ticket OPS-7)\n`,
  );
  return { dir: t.dir, root, outside, config, live: live.pid!, holder: holder.pid! };
}

describe("quiesce audit", () => {
  test("a tree of legacy locks: each verdict with its evidence, the idioms, accepted entries, symlinks not followed; exit 1", async () => {
    const t = await tree();
    const r = await cli(["audit", t.root, "--json", "--config", t.config]);
    assert.equal(r.code, 1, r.stderr);
    const j = JSON.parse(r.stdout) as AuditJson;
    assert.deepEqual(Object.keys(j), ["locks", "idioms", "notes"]);
    const lock = (name: string) => {
      const l = j.locks.find((x) => x.path === join(t.root, name));
      assert.ok(l, `${name} is listed: ${r.stdout}`);
      return l;
    };
    const cases: [string, string, string, RegExp][] = [
      ["dead.lock", "lock", "stale", /^pid \d+ is not running/],
      ["live.pid", "pid", "live", /^pid \d+ is running and started before the file was written$/],
      [
        "reused.pid",
        "pid",
        "stale",
        /^pid \d+ was reused: that process started .* after the file was written$/,
      ],
      [
        "held.lock",
        "lock",
        "live",
        new RegExp(`^held with flock by process ${t.holder} \\(per /proc/locks\\)$`),
      ],
      [
        "maintenance.flag",
        "flag",
        "unknown",
        /^no pid inside and no process holds it; the file is .* old$/,
      ],
      ["deploy.lock", "lock-dir", "unknown", /the directory is .* old/],
      ["known.flag", "flag", "unknown", /no pid inside/],
    ];
    for (const [name, kind, verdict, evidence] of cases) {
      const l = lock(name);
      assert.equal(l.kind, kind, name);
      assert.equal(l.verdict, verdict, name);
      assert.match(l.evidence, evidence, name);
      assert.equal(typeof l.ageMs, "number");
      assert.ok(!Number.isNaN(Date.parse(l.modifiedAt)), l.modifiedAt);
      assert.deepEqual(Object.keys(l).slice(0, 7), [
        "path",
        "kind",
        "verdict",
        "evidence",
        "pid",
        "ageMs",
        "accepted",
      ]);
    }
    assert.equal(lock("live.pid").pid, t.live);
    assert.ok(lock("reused.pid").ageMs >= 3_500_000);
    assert.equal(lock("known.flag").accepted, true);
    assert.match(lock("known.flag").reason ?? "", /OPS-7/);
    assert.equal(lock("maintenance.flag").accepted, false);
    assert.equal(j.locks.length, cases.length, "nothing from outside the root");
    assert.ok(!r.stdout.includes(t.outside + '/ext.lock"'), "the symlinked lock is not judged");
    assert.ok(
      j.notes.some(
        (n) =>
          n.path === join(t.root, "evil.lock") &&
          /out of the audited root; not followed/.test(n.note),
      ),
      JSON.stringify(j.notes),
    );

    const idioms = j.idioms.map(
      (i) => `${i.file.slice(t.root.length + 1)}:${i.line} ${i.idiom} | ${i.suggestion}`,
    );
    const script = join(t.root, "backup.sh");
    assert.deepEqual(
      idioms.sort(),
      [
        `backup.sh:2 test -e | quiesce run --lease backup -- ${script}`,
        `backup.sh:3 touch | quiesce run --lease backup -- ${script}`,
        `backup.sh:4 echo $$ > | quiesce run --lease backup -- ${script}`,
        `backup.sh:5 mkdir | quiesce run --lease dump -- ${script}`,
        `backup.sh:6 lockfile | quiesce run --lease report -- ${script}`,
        `backup.sh:8 flock | quiesce run --lease nightly -- ${script}`,
        `backup.sh:9 rm -f | quiesce run --lease backup -- ${script}`,
        "cron.d/sync:1 flock | quiesce run --lease sync -- /usr/local/bin/sync --all",
        "system/app.service:2 touch | quiesce run --lease app -- /usr/local/bin/app --serve",
        "system/app.service:4 rm -f | quiesce run --lease app -- /usr/local/bin/app --serve",
      ].sort(),
    );
  });

  test("the table: one section per kind, the verdicts and the failing count", async () => {
    const t = await tree();
    const r = await cli(["audit", t.root, "--config", t.config]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stdout,
      /^Lock files, pid files, flags and lock directories \(7\):\nVERDICT +KIND +AGE +SIZE +UID +PID +PATH +EVIDENCE\n/,
    );
    assert.match(
      r.stdout,
      /\nLock idioms in scripts, crontabs and units \(10\):\nFILE:LINE +IDIOM +REPLACE WITH\n/,
    );
    assert.match(r.stdout, /unknown \(accepted\) +flag .*known\.flag .*accepted: set by the CMS/);
    assert.match(r.stdout, /\naudit FAILED: 4 lock\(s\) stale or unknown and not accepted/);
  });

  test("exit 0 when every lock is live or accepted", async () => {
    const t = tempDir("quiesce-audit-ok-");
    after(t.cleanup);
    const live = liveProcess();
    await sleep(50);
    writeFileSync(join(t.dir, "agent.pid"), `${live.pid}\n`);
    writeFileSync(join(t.dir, "maintenance"), "");
    const config = join(t.dir, "q.yaml");
    writeFileSync(
      config,
      `audit:\n  accept:\n    - { path: ${join(t.dir, "maintenance")}, reason: the CMS flag }\n`,
    );
    const r = await cli(["audit", t.dir, "--config", config]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /audit OK: every lock is live or accepted \(2 lock\(s\), 1 accepted, 0 idiom\(s\)\)/,
    );
    const without = await cli(["audit", t.dir, "--config", join(t.dir, "none.yaml")]);
    assert.equal(without.code, 2, "a named config that does not exist is bad input");
  });

  test("bad input exits 2 with one sentence: a path that does not exist, an invalid audit.accept", async () => {
    const t = tempDir("quiesce-audit-bad-");
    after(t.cleanup);
    const missing = await cli(["audit", join(t.dir, "typo")]);
    assert.equal(missing.code, 2);
    assert.equal(missing.stderr, `quiesce: audit: ${join(t.dir, "typo")} does not exist\n`);
    const config = join(t.dir, "q.yaml");
    writeFileSync(config, "audit:\n  accept:\n    - path: /run/x.lock\n");
    const bad = await cli(["audit", t.dir, "--config", config]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr, `quiesce: ${config}: audit.accept: item 1: reason: is missing\n`);
  });

  test("as a non-root user: what it cannot read is a note, never an error", async (tt) => {
    if (process.getuid?.() !== 0) return tt.skip("needs root to run the audit as nobody (setpriv)");
    const t = tempDir("quiesce-audit-user-");
    after(t.cleanup);
    chmodSync(t.dir, 0o755);
    const live = liveProcess();
    await sleep(50);
    writeFileSync(join(t.dir, "agent.pid"), `${live.pid}\n`);
    writeFileSync(join(t.dir, "secret.lock"), "1\n", { mode: 0o000 });
    chmodSync(join(t.dir, "secret.lock"), 0o000);
    writeFileSync(join(t.dir, "job.sh"), "touch /run/job.lock\n");
    chmodSync(join(t.dir, "job.sh"), 0o000);
    mkdirSync(join(t.dir, "private"), { mode: 0o700 });
    writeFileSync(join(t.dir, "private", "hidden.lock"), "1\n");
    const ok = spawnSync(
      "setpriv",
      [
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        process.execPath,
        CLI,
        "audit",
        t.dir,
        "--json",
      ],
      {
        encoding: "utf8",
        env: { ...process.env, HOME: "/nonexistent", XDG_CONFIG_HOME: "", QUIESCE_CONFIG: "" },
      },
    );
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    const j = JSON.parse(ok.stdout) as AuditJson;
    assert.deepEqual(
      j.locks.map((l) => [l.path, l.verdict]),
      [[join(t.dir, "agent.pid"), "live"]],
    );
    const notes = Object.fromEntries(j.notes.map((n) => [n.path, n.note]));
    assert.deepEqual(notes, {
      [join(t.dir, "job.sh")]: "cannot be read (permission denied); skipped",
      [join(t.dir, "private")]: "cannot be read (permission denied); skipped",
      [join(t.dir, "secret.lock")]: "cannot be read (permission denied); skipped",
    });
  });
});
