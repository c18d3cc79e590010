import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  findIdioms,
  Idiom,
  scopeFor,
  type IdiomFileKind,
} from "../../../src/domain/lock-idioms.js";

type Row = [
  string,
  IdiomFileKind,
  string,
  { idiom: string; lockPath: string | null; suggestion: string }[],
];

describe("findIdioms: each lock idiom with the quiesce run line that replaces it", () => {
  const S = "/opt/jobs/backup.sh";
  const run = (scope: string, cmd = S) => `quiesce run --lease ${scope} -- ${cmd}`;
  const rows: Row[] = [
    [
      "touch",
      "script",
      "touch /var/lock/backup.lock",
      [{ idiom: Idiom.TOUCH, lockPath: "/var/lock/backup.lock", suggestion: run("backup") }],
    ],
    [
      "touch of a quoted variable",
      "script",
      'touch "$LOCKFILE"',
      [{ idiom: Idiom.TOUCH, lockPath: "$LOCKFILE", suggestion: run("backup") }],
    ],
    [
      "mkdir",
      "script",
      "mkdir /tmp/job.lock || exit 1",
      [{ idiom: Idiom.MKDIR, lockPath: "/tmp/job.lock", suggestion: run("job") }],
    ],
    [
      "test -e && exit",
      "script",
      "[ -e /var/lock/backup.lock ] && exit 0",
      [{ idiom: Idiom.TEST, lockPath: "/var/lock/backup.lock", suggestion: run("backup") }],
    ],
    [
      "test -f",
      "script",
      "if test -f /run/db.pid; then",
      [{ idiom: Idiom.TEST, lockPath: "/run/db.pid", suggestion: run("db") }],
    ],
    [
      "rm -f",
      "script",
      "rm -f /var/lock/backup.lock",
      [{ idiom: Idiom.RM, lockPath: "/var/lock/backup.lock", suggestion: run("backup") }],
    ],
    [
      "echo $$ >",
      "script",
      "echo $$ > /var/run/backup.pid",
      [{ idiom: Idiom.ECHO_PID, lockPath: "/var/run/backup.pid", suggestion: run("backup") }],
    ],
    [
      "lockfile(1)",
      "script",
      "lockfile -r 0 /tmp/x.lock || exit 1",
      [{ idiom: Idiom.LOCKFILE, lockPath: "/tmp/x.lock", suggestion: run("x") }],
    ],
    [
      "flock on a path with a command",
      "script",
      "flock -n -w 5 /var/lock/dump.lock pg_dump db || exit 1",
      [
        {
          idiom: Idiom.FLOCK,
          lockPath: "/var/lock/dump.lock",
          suggestion: run("dump", "pg_dump db"),
        },
      ],
    ],
    [
      "flock on an fd opened earlier",
      "script",
      "exec 9>/var/lock/dump.lock\nflock -n 9 || exit 1",
      [{ idiom: Idiom.FLOCK, lockPath: "/var/lock/dump.lock", suggestion: run("dump") }],
    ],
    [
      "two idioms on one line",
      "script",
      "[ -e /run/a.lock ] && exit; touch /run/a.lock",
      [
        { idiom: Idiom.TOUCH, lockPath: "/run/a.lock", suggestion: run("a") },
        { idiom: Idiom.TEST, lockPath: "/run/a.lock", suggestion: run("a") },
      ],
    ],
    [
      "system crontab with flock",
      "crontab",
      "*/5 * * * * root /usr/bin/flock -n /var/lock/sync.lock /usr/local/bin/sync --all",
      [
        {
          idiom: Idiom.FLOCK,
          lockPath: "/var/lock/sync.lock",
          suggestion: run("sync", "/usr/local/bin/sync --all"),
        },
      ],
    ],
    [
      "system crontab with touch",
      "crontab",
      "@daily root touch /run/nightly.flag && /usr/local/bin/nightly",
      [
        {
          idiom: Idiom.TOUCH,
          lockPath: "/run/nightly.flag",
          suggestion: run("nightly", "touch /run/nightly.flag && /usr/local/bin/nightly"),
        },
      ],
    ],
    [
      "user crontab",
      "user-crontab",
      "0 1 * * * rm -f /tmp/report.lock",
      [
        {
          idiom: Idiom.RM,
          lockPath: "/tmp/report.lock",
          suggestion: run("report", "rm -f /tmp/report.lock"),
        },
      ],
    ],
    [
      "unit: the ExecStart is wrapped",
      "unit",
      "[Service]\nExecStartPre=/usr/bin/touch /run/app.lock\nExecStart=-/usr/local/bin/app --serve",
      [
        {
          idiom: Idiom.TOUCH,
          lockPath: "/run/app.lock",
          suggestion: run("app", "/usr/local/bin/app --serve"),
        },
      ],
    ],
  ];
  for (const [name, kind, text, want] of rows)
    test(name, () => {
      const got = findIdioms(text, S, kind).map(({ idiom, lockPath, suggestion }) => ({
        idiom,
        lockPath,
        suggestion,
      }));
      assert.deepEqual(
        got.sort((a, b) => a.idiom.localeCompare(b.idiom)),
        want.sort((a, b) => a.idiom.localeCompare(b.idiom)),
      );
    });

  const quiet: [string, IdiomFileKind, string][] = [
    ["a comment", "script", "# touch /var/lock/backup.lock"],
    ["touch of an ordinary file", "script", "touch /var/log/backup.log"],
    ["mkdir of the lock directory's parent", "script", "mkdir -p /var/lock/subsys"],
    ["rm of a temp file", "script", "rm -f /tmp/out.txt"],
    ["a unit's description", "unit", "Description=touch /run/x.lock"],
    ["a variable named lockfile", "script", "lockfile=/tmp/x.lock"],
  ];
  for (const [name, kind, text] of quiet)
    test(`nothing found: ${name}`, () => assert.deepEqual(findIdioms(text, S, kind), []));

  test("line numbers are 1-based and count every line", () => {
    const f = findIdioms("#!/bin/sh\n\nset -e\ntouch /run/x.lock\n", S, "script");
    assert.deepEqual(
      f.map((x) => x.line),
      [4],
    );
  });
});

describe("scopeFor: the lease scope named after the lock", () => {
  const cases: [string | null, string, string][] = [
    ["/var/lock/backup.lock", "/x/y.sh", "backup"],
    ["/run/sshd.pid", "/x/y.sh", "sshd"],
    ["/tmp/.hidden.lck", "/x/y.sh", "hidden"],
    ["/run/a b.flag", "/x/y.sh", "a-b"],
    ["$LOCK", "/opt/jobs/nightly-dump.sh", "nightly-dump"],
    [null, "/etc/cron.d/sync", "sync"],
    ["9", "/opt/x.sh", "x"],
    [null, "/", "legacy"],
  ];
  for (const [lock, file, scope] of cases)
    test(`${lock} in ${file}: ${scope}`, () => assert.equal(scopeFor(lock, file), scope));
});
