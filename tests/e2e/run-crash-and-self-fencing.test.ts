import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cli, isAlive, startCli, waitFor } from "../support/cli.js";
import { eachBackend, events, showLease, withLocation } from "../support/e2e.js";
import { CLI, tempDir } from "../support/paths.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

await eachBackend("run: uncontrolled exits and self-fencing", (b) => {
  test("a SIGKILLed run leaves its lease to expire: it blocks acquisition while live, its command ends at the deadline (I11), then the lease is taken over with proof of death", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const pidFile = join(tmp.dir, "pid");
    await withLocation(b, "sigkill", async (url) => {
      const p = startCli([
        "run",
        "--store",
        url,
        "--lease",
        "s",
        "--ttl",
        "3s",
        "--",
        "sh",
        "-c",
        `echo $$ > ${pidFile}; exec sleep 30`,
      ]);
      await waitFor(
        "the command to start",
        () => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "",
      );
      const childPid = Number(readFileSync(pidFile, "utf8"));
      t.after(() => {
        if (isAlive(childPid)) process.kill(childPid, "SIGKILL");
      });
      process.kill(p.pid, "SIGKILL");
      await p.exited;
      assert.ok(
        isAlive(childPid),
        "the wrapped command outlives a SIGKILLed quiesce for now (its lease is still its own)",
      );

      const live = await cli(["run", "--store", url, "--lease", "s", "--", "true"]);
      assert.equal(live.code, 75, "blocked while the lease is live");
      assert.match(live.stderr, /s is held by run r-.*expires in/);

      const held = await showLease(url, "s");
      await sleep(Math.max(0, Date.parse(held!.expiresAt) - Date.now()) + 200);
      assert.equal(isAlive(childPid), false, "its deadline guard ended the command by the expiry");
      const next = await cli(["run", "--store", url, "--lease", "s", "--", "true"]);
      assert.equal(next.code, 0, `taken over once the owner is shown gone: ${next.stderr}`);
      const ev = await events(url, "s");
      const taken = ev.filter((e) => e.kind === "lease.taken_over");
      assert.equal(taken.length, 1, "by a logged takeover, not silently");
      assert.match(taken[0]!.message, /gone|dead|not running/i);
      assert.equal(
        ev.filter((e) => e.kind === "lease.expired").length,
        1,
        "the expiry is logged once",
      );
      assert.equal(
        ev.filter((e) => e.kind === "lease.released").length,
        1,
        "only the new run released",
      );
    });
  });

  test("the command's pid is on the lease before its gate opens: a run killed there starts nothing, and its lease is taken over", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ran = join(tmp.dir, "ran");
    await withLocation(b, "gate", async (url) => {
      const r = await cli(
        [
          "run",
          "--store",
          url,
          "--lease",
          "s",
          "--ttl",
          "1s",
          "--",
          "sh",
          "-c",
          `touch ${ran}; sleep 30`,
        ],
        {
          QUIESCE_CRASH_AT: "run.before-gate-opened",
        },
      );
      assert.equal(r.signal, "SIGKILL");
      const l = await showLease(url, "s");
      assert.ok(l && l.owner.childPid !== null, "the gate's pid came with the acquisition (I8)");
      // The gate reads end of input where its go would have come, and exits without running.
      await waitFor("the gate to exit", () => !isAlive(l.owner.childPid!));
      assert.equal(existsSync(ran), false, "the command never ran");
      await sleep(Math.max(0, Date.parse(l.expiresAt) - Date.now()) + 100);
      const next = await cli(["run", "--store", url, "--lease", "s", "--", "true"]);
      assert.equal(
        next.code,
        0,
        `nothing of the dead run is alive, so it is taken over: ${next.stderr}`,
      );
      assert.equal(existsSync(ran), false, "and its command never ran at all");
    });
  });

  test("a command whose pid was never recorded is still found by its run id, and blocks takeover", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const pidFile = join(tmp.dir, "pid");
    await withLocation(b, "runid-scan", async (url) => {
      const p = startCli([
        "run",
        "--store",
        url,
        "--lease",
        "s",
        "--ttl",
        "1s",
        "--",
        "sh",
        "-c",
        `(setsid sleep 30 & echo $! > ${pidFile}); sleep 30`,
      ]);
      await waitFor(
        "the detached grandchild",
        () => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "",
      );
      const grandchild = Number(readFileSync(pidFile, "utf8"));
      t.after(() => {
        if (isAlive(grandchild)) process.kill(grandchild, "SIGKILL");
      });
      const l = await showLease(url, "s");
      process.kill(p.pid, "SIGKILL");
      await p.exited;
      process.kill(-l!.owner.childPid!, "SIGKILL"); // the command's own group dies; the setsid'd sleep lives on
      await sleep(Math.max(0, Date.parse(l!.expiresAt) - Date.now()) + 100);
      const r = await cli(["lock", "takeover", "s", "--dry-run", "--store", url]);
      assert.match(
        r.stdout,
        new RegExp(
          `pid ${grandchild} on .*, started under run ${l!.owner.runId}, is still running`,
        ),
      );
    });
  });

  test("a holder that stops renewing (SIGSTOP past the TTL) self-fences: command terminated, exit 76, late write and release refused (I3, I4)", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ready = join(tmp.dir, "ready");
    const lateRc = join(tmp.dir, "late-rc");
    const termAt = join(tmp.dir, "term-at");
    await withLocation(b, "sigstop", async (url) => {
      // On SIGTERM the command plays zombie: it tries a fenced write with its old token once the
      // lease has expired on the store's clock. The TERM comes from the deadline guard at the
      // local deadline, a safety margin (100 ms at TTL 1s) before that expiry: a write made in
      // between is still under a current lease and rightly accepted, and whether a write sent
      // at once lands before or after the expiry depended on how fast the CLI starts.
      const cmd =
        `trap 'date +%s%N > ${termAt}; ` +
        `until ${CLI} lock show s --json --store "${url}" | grep -Eq "expired.: ?true"; do sleep 0.05; done; ` +
        `${CLI} state set s progress late --token "$QUIESCE_FENCING_TOKEN" --store "${url}" 2>/dev/null; ` +
        `echo $? > ${lateRc}; exit 0' TERM; ` +
        `${CLI} state set s progress early --token "$QUIESCE_FENCING_TOKEN" --store "${url}" && touch ${ready}; ` +
        `while :; do sleep 0.05; done`;
      const p = startCli([
        "run",
        "--store",
        url,
        "--lease",
        "s",
        "--ttl",
        "1s",
        "--grace",
        "5s",
        "--",
        "sh",
        "-c",
        cmd,
      ]);
      await waitFor("the command to start and write under the lease", () => existsSync(ready));
      const before = await showLease(url, "s");
      assert.ok(before && !before.expired);

      process.kill(p.pid, "SIGSTOP");
      await sleep(2000);
      const stale = await showLease(url, "s");
      assert.ok(
        stale?.expired,
        "the lease expired on the store clock while the holder was stopped",
      );
      process.kill(p.pid, "SIGCONT");

      const r = await p.done;
      assert.equal(r.code, 76, `run exits 76 after losing the lease; stderr: ${r.stderr}`);
      assert.match(r.stderr, /lost the lease on s \(token 1\)/);
      await waitFor("the zombie's write attempt", () => existsSync(lateRc));
      assert.equal(
        readFileSync(lateRc, "utf8").trim(),
        "76",
        "the late fenced write was refused (exit 76)",
      );
      const state = await cli(["state", "get", "s", "progress", "--store", url]);
      assert.equal(state.stdout.trim(), "early", "the late write changed nothing");

      const ev = await events(url, "s");
      assert.ok(
        ev.some((e) => e.kind === "lease.lost"),
        "the loss is an event",
      );
      const rejected = ev.filter((e) => e.kind === "lease.release_rejected");
      assert.equal(rejected.length, 1, "the late release was refused");
      assert.match(rejected[0]!.message, /expired/);
      const after = await showLease(url, "s");
      assert.ok(
        after?.expired && after.token === 1,
        "the expired lease stays for the takeover procedure",
      );
      assert.equal(isAlive(before.owner.childPid!), false, "the command is gone");
    });
  });
});
