import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cli, isAlive, startCli, waitFor } from "../support/cli.js";
import { eachBackend, events, showLease, withLocation } from "../support/e2e.js";
import { tempDir } from "../support/paths.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A pid that certainly belonged to a process that has exited. */
function deadPid(): number {
  const r = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" });
  return Number(r.stdout.trim());
}

async function untilExpired(url: string, scope: string): Promise<void> {
  const l = await showLease(url, scope);
  assert.ok(l, `${scope} is held`);
  await sleep(Math.max(0, Date.parse(l.expiresAt) - Date.now()) + 150);
}

interface TakenOverDetail {
  previous: { token: number; owner: { runId: string } };
  basis: string;
  summary: string;
  probes: { probe: string; verdict: string; evidence: string }[];
}

await eachBackend("takeover with proof of death (I5, I6)", (b) => {
  test("a SIGKILLed run's lease: refused while live, refused while its command is still being stopped, taken over once it is gone", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const pidFile = join(tmp.dir, "pid");
    await withLocation(b, "sigkill-takeover", async (url) => {
      const s = ["--store", url];
      const holder = startCli([
        "run",
        ...s,
        "--lease",
        "s",
        "--ttl",
        "4s",
        // Its deadline guard TERMs it at the deadline (I11); it ignores TERM and lives through
        // its grace, as a command with a long clean-up would: a live command blocks takeover.
        "--grace",
        "60s",
        "--",
        "sh",
        "-c",
        `trap '' TERM; echo $$ > ${pidFile}; exec sleep 60`,
      ]);
      await waitFor(
        "the command",
        () => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "",
      );
      const commandPid = Number(readFileSync(pidFile, "utf8"));
      t.after(() => {
        if (isAlive(commandPid)) process.kill(commandPid, "SIGKILL");
      });
      process.kill(holder.pid, "SIGKILL");
      await holder.exited;

      const early = await cli(["run", ...s, "--lease", "s", "--", "true"]);
      assert.equal(early.code, 75, "the heartbeat has not expired yet");
      assert.doesNotMatch(early.stderr, /takeover refused/);

      await untilExpired(url, "s");
      const working = await cli(["run", ...s, "--lease", "s", "--", "true"]);
      assert.equal(working.code, 75, "the wrapped command still runs: not dead");
      assert.match(
        working.stderr,
        /takeover refused: holder pid \d+ is gone but the command it wrapped, pid \d+ on .*, still runs/,
      );
      const refused = (await events(url, "s")).filter((e) => e.kind === "lease.takeover_refused");
      assert.equal(refused.length, 1, "the refusal is an event");

      process.kill(commandPid, "SIGKILL");
      await waitFor("the command to die", () => !isAlive(commandPid));
      const taken = await cli(["lock", "takeover", "s", "--hold", "--ttl", "30s", ...s]);
      assert.equal(taken.code, 0, taken.stderr);
      assert.equal(taken.stdout, "2\n");
      const lease = await showLease(url, "s");
      const record = (lease as unknown as { takeover: TakenOverDetail }).takeover;
      assert.equal(record.previous.token, 1);
      assert.equal(record.basis, "probe_dead");
      assert.ok(record.probes.some((p) => p.probe === "local-process" && p.verdict === "dead"));
      assert.ok(record.probes.some((p) => p.probe === "heartbeat" && p.verdict === "unknown"));

      const ev = await events(url, "s");
      const takeover = ev.find((e) => e.kind === "lease.taken_over")!;
      assert.equal(takeover.token, 2);
      assert.equal((takeover.detail as unknown as TakenOverDetail).previous.token, 1);
    });
  });

  test("ten contenders race to take over one stale lease: exactly one wins, the others see the new owner", () =>
    withLocation(b, "takeover-race", async (url) => {
      const s = ["--store", url];
      const stale = await cli([
        "lock",
        "acquire",
        "s",
        "--ttl",
        "1s",
        "--owner-pid",
        String(deadPid()),
        ...s,
      ]);
      assert.equal(stale.stdout, "1\n");
      await untilExpired(url, "s");
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          cli(["lock", "takeover", "s", "--hold", "--ttl", "1m", ...s]),
        ),
      );
      const winners = results.filter((r) => r.code === 0);
      assert.equal(
        winners.length,
        1,
        results.map((r) => `${r.code}: ${r.stdout}${r.stderr}`).join("\n"),
      );
      assert.equal(winners[0]!.stdout, "2\n");
      const owner = (await showLease(url, "s"))!.owner.runId;
      for (const r of results.filter((x) => x.code !== 0)) {
        assert.equal(r.code, 75);
        assert.ok(
          (r.stdout + r.stderr).includes(owner),
          `a loser names the winner ${owner}: ${r.stdout}${r.stderr}`,
        );
      }
      const ev = await events(url, "s");
      assert.equal(ev.filter((e) => e.kind === "lease.taken_over").length, 1);
    }));

  test("a live owner that stopped renewing (SIGSTOP) is never taken over; the refusal is an event", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ready = join(tmp.dir, "ready");
    await withLocation(b, "sigstop-takeover", async (url) => {
      const s = ["--store", url];
      const holder = startCli([
        "run",
        ...s,
        "--lease",
        "s",
        "--ttl",
        "1s",
        "--grace",
        "1s",
        "--",
        "sh",
        "-c",
        `touch ${ready}; exec sleep 60`,
      ]);
      await waitFor("the command", () => existsSync(ready));
      const held = await showLease(url, "s");
      await b.stopOutsideWrite(url, holder.pid);
      // The command runs on, so stop it too: the point is the stopped holder.
      process.kill(held!.owner.childPid!, "SIGSTOP");
      await untilExpired(url, "s");
      for (let i = 0; i < 3; i++) {
        const r = await cli(["lock", "takeover", "s", ...s]);
        assert.equal(r.code, 75);
        assert.match(r.stdout, /refuse \(owner alive\)/);
        assert.match(r.stdout, /alive but stopped .*hung\?/);
      }
      const run = await cli(["run", ...s, "--lease", "s", "--", "true"]);
      assert.equal(run.code, 75);
      assert.equal((await showLease(url, "s"))!.token, 1, "still the stopped owner's lease");
      const refusals = (await events(url, "s")).filter((e) => e.kind === "lease.takeover_refused");
      assert.ok(refusals.length >= 1 && refusals.every((e) => /owner alive/.test(e.message)));

      process.kill(held!.owner.childPid!, "SIGCONT");
      process.kill(holder.pid, "SIGCONT");
      const end = await holder.done;
      assert.equal(end.code, 76, "on waking it finds its lease lost and stops its command");
      const after = await cli(["run", ...s, "--lease", "s", "--", "true"]);
      assert.equal(after.code, 0, `now the owner is gone: taken over; ${after.stderr}`);
    });
  });

  test("a foreign system's lease is never taken over, expired or not (I6)", () =>
    withLocation(b, "foreign", async (url) => {
      const s = ["--store", url];
      await cli([
        "lock",
        "acquire",
        "s",
        "--ttl",
        "1s",
        "--system",
        "backup",
        "--owner-pid",
        String(deadPid()),
        ...s,
      ]);
      const live = await cli(["run", ...s, "--lease", "s", "--", "true"]);
      assert.equal(live.code, 75);
      await untilExpired(url, "s");
      const run = await cli(["run", ...s, "--lease", "s", "--", "true"]);
      assert.equal(run.code, 75);
      assert.match(
        run.stderr,
        /system "backup".*never takes over another system's lease: coordinate with backup/,
      );
      const take = await cli(["lock", "takeover", "s", ...s]);
      assert.equal(take.code, 75);
      const brk = await cli(["lock", "break", "s", "--reason", "stuck", ...s]);
      assert.equal(brk.code, 75, "break refuses a foreign lease without --foreign");
      assert.equal((await showLease(url, "s"))!.owner.system, "backup");
      const sameSystem = await cli(["lock", "takeover", "s", "--system", "backup", ...s]);
      assert.equal(
        sameSystem.code,
        0,
        `the backup system may take over its own dead lease: ${sameSystem.stderr}`,
      );
    }));

  test("boot id change and pid reuse are detected; a live pid with matching start time is not dead", () =>
    withLocation(b, "bootid", async (url) => {
      const s = ["--store", url];
      const live = String(process.pid); // this test process: certainly alive
      for (const [scope, tamper, expect] of [
        ["untouched", null, /refuse \(owner alive\)/],
        ["rebooted", "boot_id = 'boot-before-the-reboot'", /rebooted since the lease was taken/],
        ["reused", "pid_start = '1'", /was reused by another process/],
      ] as const) {
        assert.equal(
          (await cli(["lock", "acquire", scope, "--ttl", "1s", "--owner-pid", live, ...s])).code,
          0,
        );
        if (tamper)
          await b.rawSql(url, `UPDATE quiesce_leases SET ${tamper} WHERE scope = '${scope}'`);
        await untilExpired(url, scope);
        const r = await cli(["lock", "takeover", scope, "--dry-run", ...s]);
        assert.equal(r.code, 0);
        assert.match(r.stdout, expect, `${scope}: ${r.stdout}`);
      }
    }));

  test("an owner on another host: a command probe decides; without one, the remote grace does, never silently", () =>
    withLocation(b, "remote", async (url) => {
      const s = ["--store", url];
      await cli(["lock", "acquire", "r", "--ttl", "1s", "--owner-pid", "4121", ...s]);
      await b.rawSql(url, "UPDATE quiesce_leases SET host = 'db-7' WHERE scope = 'r'");
      await untilExpired(url, "r");
      const alive = await cli([
        "lock",
        "takeover",
        "r",
        "--dry-run",
        "--probe",
        "test {host} = db-7 && test {pid} = 4121",
        ...s,
      ]);
      assert.match(alive.stdout, /refuse \(owner alive\)/);
      assert.match(alive.stdout, /command\s+alive/);
      const unknown = await cli([
        "lock",
        "takeover",
        "r",
        "--dry-run",
        "--probe",
        "exit 3",
        "--remote-grace",
        "1ms",
        ...s,
      ]);
      // A probe that cannot reach the owner (a partition) leaves it to the remote grace.
      assert.match(unknown.stdout, /take over \(remote grace\)/);
      assert.match(unknown.stdout, /no probe could reach it: presumed dead by policy/);
      const unknownWaiting = await cli([
        ...["lock", "takeover", "r", "--dry-run", "--probe", "exit 3"],
        ...["--remote-grace", "1h", ...s],
      ]);
      assert.match(unknownWaiting.stdout, /refuse \(death unproven\)/);
      assert.match(unknownWaiting.stdout, /the probe could not decide|presumed dead after/);
      const waiting = await cli([
        "lock",
        "takeover",
        "r",
        "--dry-run",
        "--remote-grace",
        "1h",
        ...s,
      ]);
      assert.match(waiting.stdout, /refuse \(death unproven\)/);
      assert.match(waiting.stdout, /presumed dead after .* more of silence/);
      const grace = await cli(["lock", "takeover", "r", "--remote-grace", "1ms", ...s]);
      assert.equal(grace.code, 0, grace.stderr);
      assert.match(grace.stdout, /presumed dead by policy/);
      await cli(["lock", "acquire", "d", "--ttl", "1s", ...s]);
      await b.rawSql(url, "UPDATE quiesce_leases SET host = 'db-8' WHERE scope = 'd'");
      await untilExpired(url, "d");
      const dead = await cli([
        "lock",
        "takeover",
        "d",
        "--probe",
        "exit 1",
        "--remote-grace",
        "never",
        ...s,
      ]);
      assert.equal(dead.code, 0, dead.stderr);
      assert.match(dead.stdout, /exited 1 \(dead\)/);
    }));

  test("startup reconciliation sweeps expired leases: the dead are taken over and cleared, the rest reported", () =>
    withLocation(b, "sweep", async (url) => {
      const s = ["--store", url];
      await cli([
        "lock",
        "acquire",
        "host:dead",
        "--ttl",
        "1s",
        "--owner-pid",
        String(deadPid()),
        ...s,
      ]);
      await cli([
        "lock",
        "acquire",
        "host:alive",
        "--ttl",
        "1s",
        "--owner-pid",
        String(process.pid),
        ...s,
      ]);
      await cli(["lock", "acquire", "host:live", "--ttl", "1m", ...s]);
      await cli([
        "lock",
        "acquire",
        "other:dead",
        "--ttl",
        "1s",
        "--owner-pid",
        String(deadPid()),
        ...s,
      ]);
      await sleep(1200);
      const dry = await cli([
        "lock",
        "takeover",
        "--all-expired",
        "--prefix",
        "host:",
        "--dry-run",
        "--json",
        ...s,
      ]);
      const plan = JSON.parse(dry.stdout) as { scope: string; attempt: { outcome: string } }[];
      assert.deepEqual(plan.map((e) => [e.scope, e.attempt.outcome]).sort(), [
        ["host:alive", "refused"],
        ["host:dead", "would_take_over"],
      ]);
      assert.ok(await showLease(url, "host:dead"), "a dry run changes nothing");
      const r = await cli(["lock", "takeover", "--all-expired", "--prefix", "host:", ...s]);
      assert.equal(r.code, 75, "one lease stays blocked, so the sweep says so");
      assert.match(r.stdout, /host:dead\s+1\s+taken over, cleared/);
      assert.match(r.stdout, /host:alive\s+1\s+refused\s+holder pid \d+ on .* is still running/);
      assert.equal(await showLease(url, "host:dead"), null);
      assert.ok(await showLease(url, "host:alive"));
      assert.ok(await showLease(url, "host:live"));
      assert.ok(await showLease(url, "other:dead"), "outside the prefix: untouched");
    }));

  test("lock break: refuses an alive owner, records the incident before releasing, --force only past unknown", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ready = join(tmp.dir, "ready");
    await withLocation(b, "break", async (url) => {
      const s = ["--store", url];
      const holder = startCli([
        "run",
        ...s,
        "--lease",
        "alive",
        "--ttl",
        "1s",
        "--grace",
        "60s", // the command ignores its deadline guard's TERM and is alive through the grace
        "--",
        "sh",
        "-c",
        `trap '' TERM; touch ${ready}; exec sleep 60`,
      ]);
      await waitFor("the command", () => existsSync(ready));
      const h = await showLease(url, "alive");
      process.kill(holder.pid, "SIGKILL");
      t.after(() => {
        if (isAlive(h!.owner.childPid!)) process.kill(h!.owner.childPid!, "SIGKILL");
      });
      await untilExpired(url, "alive");
      const refused = await cli([
        "lock",
        "break",
        "alive",
        "--reason",
        "wave blocked",
        "--force",
        ...s,
      ]);
      assert.equal(refused.code, 75, "--force never overrides an alive owner");
      assert.match(refused.stdout, /refuse \(owner alive\)/);

      // Unknown: no process recorded, same host; the remote grace is off.
      await cli(["lock", "acquire", "u", "--ttl", "1s", "--owner-pid", "none", ...s]);
      await untilExpired(url, "u");
      const unproven = await cli([
        "lock",
        "break",
        "u",
        "--reason",
        "stuck",
        "--remote-grace",
        "never",
        ...s,
      ]);
      assert.equal(unproven.code, 75);
      assert.match(unproven.stderr, /death is unproven \(--force overrides UNKNOWN, never ALIVE\)/);

      // A crash between the incident record and the release leaves the record and the lease.
      const crashed = await cli(
        [
          "lock",
          "break",
          "u",
          "--reason",
          "stuck",
          "--operator",
          "alice",
          "--force",
          "--remote-grace",
          "never",
          ...s,
        ],
        {
          QUIESCE_CRASH_AT: "break.after-incident",
        },
      );
      assert.equal(crashed.signal, "SIGKILL");
      assert.ok(await showLease(url, "u"), "not released");
      assert.equal(
        (await events(url, "u")).filter((e) => e.kind === "lease.broken").length,
        1,
        "but recorded",
      );

      const broken = await cli([
        "lock",
        "break",
        "u",
        "--reason",
        "stuck",
        "--operator",
        "alice",
        "--force",
        "--remote-grace",
        "never",
        ...s,
      ]);
      assert.equal(broken.code, 0, broken.stderr);
      assert.equal(await showLease(url, "u"), null);
      const ev = await events(url, "u");
      const incidents = ev.filter((e) => e.kind === "lease.broken");
      const last = incidents.at(-1)!;
      const d = last.detail as {
        operator: string;
        reason: string;
        forced: boolean;
        lease: { token: number; owner: { host: string } };
      };
      assert.equal(d.operator, "alice");
      assert.equal(d.reason, "stuck");
      assert.equal(d.forced, true);
      assert.equal(d.lease.token, 1);
      const releasedAt = ev.findIndex((e) => e.kind === "lease.released");
      assert.ok(ev.indexOf(last) < releasedAt, "the incident comes before the release");
    });
  });
});
