import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { isAlive, startCli, waitFor } from "../support/cli.js";
import { eachBackend, events, showLease, withLocation } from "../support/e2e.js";
import { tempDir } from "../support/paths.js";

/**
 * I11: the command never outlives the lease, whatever happens to `quiesce run` itself.
 * Each test judges from what the command itself wrote (timestamps, pid files) and from the
 * store's log, with real processes and real signals.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A command that writes the time (epoch ms) every 100 ms until it dies. */
const ticker = (file: string) => `while :; do date +%s%3N >> ${file}; sleep 0.1; done`;

function lastTick(file: string): number {
  const lines = readFileSync(file, "utf8").trim().split("\n");
  return Number(lines[lines.length - 1]);
}

/** Pids of deadline guards watching process group `pgid` (their argv names it). */
function guardsOf(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      const at = argv.indexOf("quiesce-guard");
      if (at !== -1 && argv[at + 1] === String(pgid) && isAlive(Number(name)))
        out.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Fields of /proc/PID/stat after the command name: [0] is the state, [1] the parent, [3] the session. */
function statFields(pid: number): string[] {
  const st = readFileSync(`/proc/${pid}/stat`, "utf8");
  return st.slice(st.lastIndexOf(")") + 2).split(" ");
}

/** Live processes whose arguments include `word`. */
function processesWith(word: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (argv.includes(word) && isAlive(Number(name))) out.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return out;
}

await eachBackend("run: the command never outlives the lease (I11)", (b) => {
  test("a wrapper SIGSTOPped for 3x the TTL: its command is terminated by the lease's deadline", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ticks = join(tmp.dir, "ticks");
    await withLocation(b, "freeze", async (url) => {
      const ttlMs = 2000;
      const graceMs = 1000;
      const p = startCli([
        "run",
        "--store",
        url,
        "--lease",
        "s",
        "--ttl",
        "2s",
        "--grace",
        "1s",
        "--",
        "sh",
        "-c",
        ticker(ticks),
      ]);
      await waitFor("the command to tick", () => existsSync(ticks));
      await sleep(700); // a renewal or two
      const frozenAt = Date.now();
      process.kill(p.pid, "SIGSTOP");
      t.after(() => {
        if (isAlive(p.pid)) process.kill(p.pid, "SIGCONT");
      });
      await sleep(3 * ttlMs);
      const last = lastTick(ticks);
      assert.ok(
        last <= frozenAt + ttlMs + graceMs,
        `the command's last act came ${last - frozenAt} ms after the freeze (TTL ${ttlMs} + grace ${graceMs})`,
      );
      await sleep(300);
      assert.equal(lastTick(ticks), last, "and it acts no more");
      process.kill(p.pid, "SIGCONT");
      const r = await p.done;
      assert.equal(r.code, 76, `lost while the command ran: ${r.stderr}`);
      const ev = await events(url, "s");
      assert.equal(ev.filter((e) => e.kind === "lease.lost").length, 1, "the loss is logged once");
      assert.equal(ev.filter((e) => e.kind === "lease.lapsed_after_exit").length, 0);
    });
  });

  test("the deadline guard killed while the command runs: a new one takes its place and still ends the command", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ticks = join(tmp.dir, "ticks");
    const pidFile = join(tmp.dir, "pid");
    await withLocation(b, "guard-killed", async (url) => {
      const p = startCli([
        "run",
        "--store",
        url,
        "--lease",
        "s",
        "--ttl",
        "2s",
        "--grace",
        "1s",
        "--",
        "sh",
        "-c",
        `echo $$ > ${pidFile}; ${ticker(ticks)}`,
      ]);
      t.after(() => {
        if (isAlive(p.pid)) process.kill(p.pid, "SIGCONT");
      });
      await waitFor("the command to tick", () => existsSync(ticks));
      const pgid = Number(readFileSync(pidFile, "utf8"));
      const [first] = await waitFor("its guard", () => {
        const g = guardsOf(pgid);
        return g.length === 1 ? g : undefined;
      });
      process.kill(first!, "SIGKILL");
      const [second] = await waitFor("a new guard", () => {
        const g = guardsOf(pgid).filter((x) => x !== first);
        return g.length === 1 ? g : undefined;
      });
      assert.notEqual(second, first);
      await waitFor("the wrapper to say so", () => /a new guard/.test(p.stderr()));
      // The new guard is armed and re-armed: freeze the wrapper and the command still ends.
      await sleep(800);
      const frozenAt = Date.now();
      process.kill(p.pid, "SIGSTOP");
      await sleep(4000);
      assert.ok(lastTick(ticks) <= frozenAt + 2000 + 1000, "terminated by the new guard");
      process.kill(p.pid, "SIGCONT");
      assert.equal((await p.done).code, 76);
    });
  });

  test("a command that leaves a background child: the child is stopped before the release and never acts after it", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ticks = join(tmp.dir, "ticks");
    const childPid = join(tmp.dir, "child");
    await withLocation(b, "leftover", async (url) => {
      const p = startCli([
        "run",
        "--store",
        url,
        "--lease",
        "s",
        "--ttl",
        "5s",
        "--",
        "sh",
        "-c",
        `(${ticker(ticks)}) & echo $! > ${childPid}; sleep 0.5; exit 0`,
      ]);
      const r = await p.done;
      const child = Number(readFileSync(childPid, "utf8"));
      t.after(() => {
        if (isAlive(child)) process.kill(child, "SIGKILL");
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /\d+ process(es)? left behind by the command (was|were) stopped/);
      assert.equal(isAlive(child), false, "the background child is gone when run exits");
      const released = (await events(url, "s")).find((e) => e.kind === "lease.released");
      assert.ok(released, "the lease was released");
      const at = Date.parse((released as unknown as { at: string }).at);
      const last = lastTick(ticks);
      assert.ok(last <= at, `the child's last act (${last}) came before the release (${at})`);
      await sleep(300);
      assert.equal(lastTick(ticks), last, "and nothing acts after it");
    });
  });

  test("--leave-children keeps today's behaviour: the child runs on, outside the lease", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const childPid = join(tmp.dir, "child");
    await withLocation(b, "leave", async (url) => {
      const p = startCli([
        "run",
        "--store",
        url,
        "--lease",
        "s",
        "--ttl",
        "5s",
        "--leave-children",
        "--",
        "sh",
        "-c",
        `sleep 30 & echo $! > ${childPid}; exit 0`,
      ]);
      const r = await p.done;
      const child = Number(readFileSync(childPid, "utf8"));
      t.after(() => {
        if (isAlive(child)) process.kill(child, "SIGKILL");
      });
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /left behind/);
      assert.ok(isAlive(child), "the daemon it started on purpose still runs");
      assert.equal(await showLease(url, "s"), null, "and the lease is released");
    });
  });

  test("a wrapper stopped past the TTL after its command exited 3: exit 3, and the lapse is recorded as such", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const started = join(tmp.dir, "started");
    await withLocation(b, "late-lapse", async (url) => {
      const p = startCli([
        "run",
        "--store",
        url,
        "--lease",
        "s",
        "--ttl",
        "1s",
        "--grace",
        "1s",
        "--",
        "sh",
        "-c",
        `touch ${started}; sleep 0.4; exit 3`,
      ]);
      await waitFor("the command to start", () => existsSync(started), 15_000, 10);
      process.kill(p.pid, "SIGSTOP");
      t.after(() => {
        if (isAlive(p.pid)) process.kill(p.pid, "SIGCONT");
      });
      await sleep(3000); // the command exits meanwhile; then the lease's deadline passes
      process.kill(p.pid, "SIGCONT");
      const r = await p.done;
      assert.equal(r.code, 3, `the command's own code: ${r.stderr}`);
      assert.match(r.stderr, /lapsed after the command had ended/);
      const ev = await events(url, "s");
      assert.equal(ev.filter((e) => e.kind === "lease.lost").length, 0, "not a loss");
      const lapse = ev.filter((e) => e.kind === "lease.lapsed_after_exit");
      assert.equal(lapse.length, 1);
      assert.equal(lapse[0]!.detail.exitCode, 3);
    });
  });

  test("a wrapper SIGKILLed: its command runs on only until the lease's deadline", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ticks = join(tmp.dir, "ticks");
    await withLocation(b, "orphan", async (url) => {
      const p = startCli([
        "run",
        "--store",
        url,
        "--lease",
        "s",
        "--ttl",
        "2s",
        "--grace",
        "1s",
        "--",
        "sh",
        "-c",
        ticker(ticks),
      ]);
      await waitFor("the command to tick", () => existsSync(ticks));
      await sleep(500);
      const killedAt = Date.now();
      process.kill(p.pid, "SIGKILL");
      await p.exited;
      await sleep(4000);
      const last = lastTick(ticks);
      assert.ok(last > killedAt + 300, "the command went on after the wrapper died");
      assert.ok(
        last <= killedAt + 2000 + 1000,
        `but not past the deadline (${last - killedAt} ms)`,
      );
      const lease = await showLease(url, "s");
      assert.ok(lease && last < Date.parse(lease.expiresAt) + 1000);
    });
  });

  test("the deadline guard is nobody's child, in a session of its own, and not under the run", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const pidFile = join(tmp.dir, "pid");
    await withLocation(b, "guard-shape", async (url) => {
      const p = startCli([
        ...["run", "--store", url, "--lease", "s", "--ttl", "3s", "--"],
        ...["sh", "-c", `echo $$ > ${pidFile}; sleep 30`],
      ]);
      t.after(() => {
        if (isAlive(p.pid)) process.kill(p.pid, "SIGKILL");
      });
      await waitFor(
        "the command to start",
        () => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "",
      );
      const pgid = Number(readFileSync(pidFile, "utf8"));
      const [guard] = await waitFor("its guard", () => {
        const g = guardsOf(pgid);
        return g.length === 1 ? g : null;
      });
      const f = statFields(guard!);
      assert.notEqual(
        Number(f[1]),
        pgid,
        "not the command's child: a wait for all its children must not wait for it",
      );
      assert.notEqual(Number(f[1]), p.pid, "nor ours: the gate started it");
      assert.equal(Number(f[3]), guard, "the leader of a session of its own");
      const env = readFileSync(`/proc/${guard}/environ`, "utf8").split("\0");
      assert.ok(
        !env.some((v) => v.startsWith("QUIESCE_RUN_ID=")),
        "no QUIESCE_RUN_ID: a takeover probe looking for the run's processes must not count it",
      );
      process.kill(p.pid, "SIGTERM");
      const r = await p.done;
      assert.equal(r.code, 143, r.stderr);
      await waitFor("the guard to leave with the command", () => !isAlive(guard!));
    });
  });

  test("a command that waits for all its children is not held up by the guard", () =>
    withLocation(b, "wait-all", async (url) => {
      // perl's wait() returns -1 when the process has no child at all.
      const p = startCli([
        ...["run", "--store", url, "--lease", "s", "--"],
        ...["perl", "-e", "exit(wait() == -1 ? 0 : 3)"],
      ]);
      const r = await p.done;
      assert.equal(r.code, 0, `the command found a child it did not start: ${r.stderr}`);
    }));

  test("a run refused the lease starts nothing, and leaves neither its gate nor its guard behind", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ran = join(tmp.dir, "ran");
    const marker = `refused-${process.pid}-${b.name}`;
    await withLocation(b, "refused-gate", async (url) => {
      const holder = startCli([
        ...["run", "--store", url, "--lease", "s", "--"],
        ...["sh", "-c", `touch ${ran}-holder; sleep 30`],
      ]);
      t.after(() => {
        if (isAlive(holder.pid)) process.kill(holder.pid, "SIGKILL");
      });
      await waitFor("the holder's command", () => existsSync(`${ran}-holder`));
      const refused = startCli([
        ...["run", "--store", url, "--lease", "s", "--wait", "2s", "--"],
        ...["sh", "-c", `touch ${ran}`, marker],
      ]);
      // While it waits in line, its command waits behind its gate, with its guard not armed.
      const [gate] = await waitFor("the waiting run's gate", () => {
        const g = processesWith(marker).filter((x) => x !== refused.pid);
        return g.length === 1 ? g : null;
      });
      const [guard] = await waitFor("the gate's guard", () => {
        const g = guardsOf(gate!);
        return g.length === 1 ? g : null;
      });
      const r = await refused.done;
      assert.equal(r.code, 75, r.stderr);
      assert.equal(existsSync(ran), false, "the refused run's command never ran");
      await waitFor("the gate and the guard to be gone", () => !isAlive(gate!) && !isAlive(guard!));
      process.kill(holder.pid, "SIGTERM");
      await holder.done;
    });
  });
});
