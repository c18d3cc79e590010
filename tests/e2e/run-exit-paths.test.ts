import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cli, isAlive, startCli, waitFor } from "../support/cli.js";
import { eachBackend, events, processesOfRun, showLease, withLocation } from "../support/e2e.js";
import { tempDir } from "../support/paths.js";

/**
 * I7: every controlled exit of `quiesce run` releases its lease: the command's success or
 * failure, a signal to quiesce (forwarded, released after the command ends), and an uncaught
 * error inside quiesce itself.
 */
await eachBackend("run: every controlled exit releases the lease (I7)", (b) => {
  const run = (url: string, scope: string, cmd: string, env: NodeJS.ProcessEnv = {}) =>
    startCli(
      [
        "run",
        "--store",
        url,
        "--lease",
        scope,
        "--ttl",
        "5s",
        "--grace",
        "2s",
        "--",
        "sh",
        "-c",
        cmd,
      ],
      env,
    );

  async function lastRelease(url: string, scope: string) {
    const ev = await events(url, scope);
    return ev.filter((e) => e.kind === "lease.released").at(-1);
  }

  test("the command's environment carries the token, scope and run id", () =>
    withLocation(b, "env", async (url) => {
      const r = await run(
        url,
        "env:scope",
        'echo "$QUIESCE_FENCING_TOKEN|$QUIESCE_LEASE_SCOPE|$QUIESCE_RUN_ID"',
      ).done;
      assert.equal(r.code, 0, r.stderr);
      const [token, scope, runId] = r.stdout.trim().split("|");
      assert.equal(token, "1");
      assert.equal(scope, "env:scope");
      assert.match(runId!, /^r-[0-9a-f-]{36}$/);
    }));

  test("success: exit 0, lease released", () =>
    withLocation(b, "ok", async (url) => {
      const r = await run(url, "s", "exit 0").done;
      assert.equal(r.code, 0);
      assert.equal(await showLease(url, "s"), null);
      assert.match((await lastRelease(url, "s"))!.message, /command exited with code 0/);
    }));

  test("failure: the command's exit code is ours, lease released", () =>
    withLocation(b, "fail", async (url) => {
      const r = await run(url, "s", "exit 7").done;
      assert.equal(r.code, 7);
      assert.equal(await showLease(url, "s"), null);
      assert.match((await lastRelease(url, "s"))!.message, /code 7/);
    }));

  test("a command that cannot be started: exit 127, lease released", () =>
    withLocation(b, "enoent", async (url) => {
      const r = await cli(["run", "--store", url, "--lease", "s", "--", "/no/such/command"]);
      assert.equal(r.code, 127);
      assert.match(r.stderr, /cannot start \/no\/such\/command/);
      assert.equal(await showLease(url, "s"), null);
    }));

  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    test(`${sig} to quiesce is forwarded; the lease is released after the command exits`, async (t) => {
      const tmp = tempDir();
      t.after(tmp.cleanup);
      const ready = join(tmp.dir, "ready");
      const got = join(tmp.dir, "got");
      const short = sig.slice(3);
      await withLocation(b, `sig-${short.toLowerCase()}`, async (url) => {
        const p = run(
          url,
          "s",
          `trap 'echo ${short} > ${got}; exit 0' ${short}; touch ${ready}; while :; do sleep 0.05; done`,
        );
        await waitFor("the command to start", () => existsSync(ready));
        const held = await showLease(url, "s");
        assert.ok(held && !held.expired, "held while the command runs");
        process.kill(p.pid, sig);
        const r = await p.done;
        assert.equal(r.code, 0, `the command trapped ${sig} and exited 0; stderr: ${r.stderr}`);
        assert.equal(readFileSync(got, "utf8").trim(), short, "the command received the signal");
        assert.equal(await showLease(url, "s"), null);
        assert.match((await lastRelease(url, "s"))!.message, new RegExp(`stopped by ${sig}`));
      });
    });
  }

  test("a command killed by the forwarded signal: exit 128+n, released", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ready = join(tmp.dir, "ready");
    await withLocation(b, "sig-kill", async (url) => {
      const p = run(url, "s", `touch ${ready}; exec sleep 30`);
      await waitFor("the command to start", () => existsSync(ready));
      process.kill(p.pid, "SIGTERM");
      const r = await p.done;
      assert.equal(r.code, 143);
      assert.equal(await showLease(url, "s"), null);
    });
  });

  test("a command killed by another process while the lease is valid: exit 128+n, released, no loss", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ready = join(tmp.dir, "ready");
    await withLocation(b, "outside-kill", async (url) => {
      const p = run(url, "s", `touch ${ready}; exec sleep 30`);
      await waitFor("the command to start", () => existsSync(ready));
      const held = await showLease(url, "s");
      // Not quiesce's signal: quiesce asks its deadline guard, which has not fired.
      process.kill(held!.owner.childPid!, "SIGTERM");
      const r = await p.done;
      assert.equal(r.code, 143, r.stderr);
      assert.equal(await showLease(url, "s"), null, "released");
      assert.equal((await events(url, "s")).filter((e) => e.kind === "lease.lost").length, 0);
    });
  });

  test("a second signal kills a command that ignores the first; still released", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ready = join(tmp.dir, "ready");
    await withLocation(b, "sig-twice", async (url) => {
      const p = run(url, "s", `trap '' TERM; touch ${ready}; while :; do sleep 0.05; done`);
      await waitFor("the command to start", () => existsSync(ready));
      process.kill(p.pid, "SIGTERM");
      await new Promise((r) => setTimeout(r, 300));
      assert.ok(isAlive(p.pid), "the command ignored SIGTERM, so quiesce waits");
      assert.ok((await showLease(url, "s")) !== null, "and keeps the lease meanwhile");
      process.kill(p.pid, "SIGTERM");
      const r = await p.done;
      assert.equal(r.code, 137, r.stderr);
      assert.equal(await showLease(url, "s"), null);
    });
  });

  test("an uncaught error inside quiesce stops the command, then releases; exit 1", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const pidFile = join(tmp.dir, "pid");
    await withLocation(b, "bug", async (url) => {
      const p = run(url, "s", `echo $$ > ${pidFile}; exec sleep 30`, {
        QUIESCE_CRASH_AT: "run.after-spawn:throw",
      });
      const r = await p.done;
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /internal error: injected failure at run\.after-spawn/);
      // The error may come before or after the command got going; either way nothing started
      // under the run may outlive it.
      const runId = (await events(url, "s")).find((e) => e.kind === "lease.acquired")!.runId;
      assert.ok(runId);
      assert.deepEqual(processesOfRun(runId), [], "the command was stopped");
      if (existsSync(pidFile)) assert.equal(isAlive(Number(readFileSync(pidFile, "utf8"))), false);
      assert.equal(await showLease(url, "s"), null);
      assert.match((await lastRelease(url, "s"))!.message, /quiesce failed/);
    });
  });
});
