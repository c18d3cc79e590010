import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cli, isAlive, waitFor } from "../support/cli.js";
import { eachBackend, showLease, withLocation } from "../support/e2e.js";
import { CLI, tempDir } from "../support/paths.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The README's shell pattern: a script takes a lease with `token=$(quiesce lock acquire ...)`,
 * works, renews, releases. `lock acquire` records the script's shell as the owner, so when
 * the script is SIGKILLed the next acquisition proves the owner dead and takes over.
 */
const SCRIPT = `#!/bin/sh
set -e
token=$(quiesce lock acquire backup:nightly --ttl 1s --system backup --note "db dump")
echo "$token" > "$OUT/token"
echo $$ > "$OUT/pid"
while :; do
  sleep 0.2
  quiesce lock renew backup:nightly --token "$token" >/dev/null
done
`;

await eachBackend("lock acquire from a script", (b) => {
  test("the script's shell owns the lease: SIGKILLed, its lease is taken over with proof of death", () =>
    withLocation(b, "script-owner", async (url) => {
      const t = tempDir("quiesce-script-");
      try {
        // `quiesce` on the PATH as an installed bin would be (exec: no extra process).
        const bin = join(t.dir, "bin");
        writeFileSync(join(t.dir, "script.sh"), SCRIPT, { mode: 0o755 });
        mkdirSync(bin);
        writeFileSync(
          join(bin, "quiesce"),
          `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`,
        );
        chmodSync(join(bin, "quiesce"), 0o755);
        const child = spawn(join(t.dir, "script.sh"), [], {
          detached: true, // its own process group, killed whole below
          stdio: "ignore",
          env: {
            ...process.env,
            PATH: `${bin}:${process.env.PATH}`,
            OUT: t.dir,
            QUIESCE_STORE: url,
          },
        });
        const pid = child.pid!;
        await waitFor("the script's token", () => existsSync(join(t.dir, "pid")), 20_000);
        assert.equal(Number(readFileSync(join(t.dir, "pid"), "utf8")), pid);
        const held = await showLease(url, "backup:nightly");
        assert.equal(held?.owner.pid, pid, "the owner is the script's shell, not quiesce");
        assert.equal(held?.owner.system, "backup");

        // A second acquirer while the script lives (and renews) is refused.
        await sleep(1200);
        const busy = await cli([
          "lock",
          "acquire",
          "backup:nightly",
          "--ttl",
          "1m",
          "--store",
          url,
        ]);
        assert.equal(busy.code, 75, busy.stderr);

        process.kill(-pid, "SIGKILL");
        await waitFor("the script to die", () => !isAlive(pid));
        await sleep(1300); // its lease expires
        const next = await cli([
          ...["lock", "acquire", "backup:nightly", "--ttl", "1m", "--system", "backup"],
          ...["--store", url],
        ]);
        assert.equal(next.code, 0, next.stderr);
        const token = Number(readFileSync(join(t.dir, "token"), "utf8"));
        assert.equal(next.stdout, `${token + 1}\n`);
        const after = await cli(["lock", "show", "backup:nightly", "--json", "--store", url]);
        const takeover = JSON.stringify(
          (JSON.parse(after.stdout) as { takeover: unknown }).takeover,
        );
        assert.match(takeover, new RegExp(`holder pid ${pid} is gone`));
      } finally {
        t.cleanup();
      }
    }));
});

test("--owner-pid none records no process; a pid that is not a number is refused", async () => {
  const t = tempDir("quiesce-ownerpid-");
  try {
    const url = join(t.dir, "q.db");
    const r = await cli([
      "lock",
      "acquire",
      "x",
      "--ttl",
      "1m",
      "--owner-pid",
      "none",
      "--store",
      url,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await showLease(url, "x"))?.owner.pid, null);
    const bad = await cli([
      "lock",
      "acquire",
      "y",
      "--ttl",
      "1m",
      "--owner-pid",
      "me",
      "--store",
      url,
    ]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--owner-pid: "me" is not a process id/);
  } finally {
    t.cleanup();
  }
});
