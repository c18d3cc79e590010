import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { startCli, waitFor } from "../support/cli.js";
import { eachBackend, withLocation } from "../support/e2e.js";
import { tempDir } from "../support/paths.js";

/**
 * `--wait` hands the lease over in arrival order. SQLite's busy handler alone would let
 * whichever process polls at the right moment win, over and over.
 */
await eachBackend("run --wait: fair handoff", (b) => {
  for (const [label, env] of [
    ["", {}],
    // A lost wake-up costs the safety poll, never the order or the handoff.
    [" (every wake-up hint dropped)", { QUIESCE_FAULT_DROP_WAKEUPS: "1" }],
  ] as const)
    test(`waiters get the lease in the order they arrived${label}`, async (t) => {
      const tmp = tempDir();
      t.after(tmp.cleanup);
      const order = join(tmp.dir, "order");
      const ready = join(tmp.dir, "ready");
      const go = join(tmp.dir, "go");
      await withLocation(b, "fifo", async (url) => {
        const run = (name: string, cmd: string) =>
          startCli(
            [
              "run",
              "--store",
              url,
              "--lease",
              "q",
              "--ttl",
              "5s",
              "--wait",
              "60s",
              "--",
              "sh",
              "-c",
              cmd.replaceAll("NAME", name),
            ],
            env,
          );
        // The holder keeps the lease until every waiter is in line.
        const holder = run("holder", `touch ${ready}; while [ ! -f ${go} ]; do sleep 0.05; done`);
        await waitFor("the holder to start", () => existsSync(ready));
        const waiters = [];
        for (const name of ["first", "second", "third", "fourth"]) {
          const w = run(name, `echo NAME >> ${order}`);
          // In line once it reports waiting (it enqueues before its first report).
          await waitFor(`${name} to queue`, () => /waiting for q/.test(w.stderr()));
          waiters.push(w);
        }
        writeFileSync(go, "");
        for (const p of [holder, ...waiters]) assert.equal((await p.done).code, 0);
        assert.deepEqual(readFileSync(order, "utf8").trim().split("\n"), [
          "first",
          "second",
          "third",
          "fourth",
        ]);
      });
    });

  // The release may grant the lease to the dead waiter (its ticket lives on for up to 3 s):
  // then the lease is taken over once its TTL has run out, with the proof (a dead pid on
  // this host), as after any holder's crash.
  test("a waiter that dies does not block the line for longer than a lease TTL", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ready = join(tmp.dir, "ready");
    const go = join(tmp.dir, "go");
    const done = join(tmp.dir, "done");
    await withLocation(b, "deadwaiter", async (url) => {
      const run = (cmd: string) =>
        startCli([
          "run",
          "--store",
          url,
          "--lease",
          "q",
          "--ttl",
          "5s",
          "--wait",
          "60s",
          "--",
          "sh",
          "-c",
          cmd,
        ]);
      const holder = run(`touch ${ready}; while [ ! -f ${go} ]; do sleep 0.05; done`);
      await waitFor("the holder to start", () => existsSync(ready));
      const doomed = run("true");
      await waitFor("the doomed waiter to queue", () => /waiting for q/.test(doomed.stderr()));
      const patient = run(`touch ${done}`);
      await waitFor("the patient waiter to queue", () => /waiting for q/.test(patient.stderr()));
      process.kill(doomed.pid, "SIGKILL");
      await doomed.done;
      writeFileSync(go, "");
      assert.equal((await holder.done).code, 0);
      const r = await patient.done;
      assert.equal(r.code, 0, r.stderr);
      assert.ok(existsSync(done));
    });
  });
});
