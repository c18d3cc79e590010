import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { cli } from "../support/cli.js";
import { eachBackend, showLease, withLocation } from "../support/e2e.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const deadPid = () =>
  Number(spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim());

await eachBackend("check and incident", (b) => {
  test("check: CRITICAL naming the scope while a dead owner's lease is expired, OK after the takeover; json and prometheus parse", () =>
    withLocation(b, "check", async (url) => {
      const s = ["--store", url];
      const none = await cli(["check", ...s]);
      assert.equal(none.code, 3, "no store yet: UNKNOWN, never OK");
      await cli(["lock", "acquire", "live", "--ttl", "1m", ...s]);
      const ok = await cli(["check", ...s]);
      assert.equal(ok.code, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /^QUIESCE OK - /);

      await cli([
        "lock",
        "acquire",
        "host:db-7",
        "--ttl",
        "1s",
        "--owner-pid",
        String(deadPid()),
        ...s,
      ]);
      await sleep(1300);
      const crit = await cli(["check", ...s]);
      assert.equal(crit.code, 2);
      assert.match(
        crit.stdout,
        /^QUIESCE CRITICAL - .*host:db-7 expired .* ago and blocks its scope.*\| leases=2 expired=1/,
      );
      assert.doesNotMatch(crit.stdout, /CRITICAL: live/);

      const json = JSON.parse((await cli(["check", "--format", "json", ...s])).stdout) as {
        status: number;
        checkedAt: string;
        findings: { code: string; subject: string }[];
      };
      assert.equal(json.status, 2);
      assert.match(json.checkedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(
        json.findings.map((f) => [f.code, f.subject]),
        [["expired", "host:db-7"]],
      );

      const prom = await cli(["check", "--format", "prometheus", ...s]);
      assert.equal(prom.code, 2);
      const samples = new Map<string, number>();
      for (const line of prom.stdout.split("\n")) {
        if (line === "" || line.startsWith("#")) continue;
        const m = /^([a-z_]+(?:\{[^}]*\})?) (-?[\d.e+]+)$/.exec(line);
        assert.ok(m, `a valid exposition line: ${line}`);
        samples.set(m[1]!, Number(m[2]));
      }
      assert.equal(samples.get("quiesce_check_status"), 2);
      assert.equal(samples.get("quiesce_leases_expired"), 1);
      assert.ok(
        samples.get('quiesce_lease_expired_seconds{scope="host:db-7",system="quiesce"}')! > 0,
      );

      const held = await cli(["check", "--max-hold", "1ms", ...s]);
      assert.match(held.stdout, /WARNING: live has been held for/);

      const take = await cli(["lock", "takeover", "host:db-7", ...s]);
      assert.equal(take.code, 0, take.stderr);
      const after = await cli(["check", ...s]);
      assert.equal(after.code, 0, after.stdout);
    }));

  test("check: a refused takeover is a WARNING within --window, for every check in it (no mark a manual run moves)", () =>
    withLocation(b, "check-refused", async (url) => {
      const s = ["--store", url];
      await cli(["lock", "acquire", "f", "--ttl", "1s", "--system", "backup", ...s]);
      await sleep(1200);
      assert.equal((await cli(["lock", "takeover", "f", ...s])).code, 75);
      // The foreign lease stays expired (CRITICAL); the refusal is reported beside it.
      for (const run of ["by hand", "scheduled"]) {
        const w = await cli(["check", "--format", "json", ...s]);
        assert.equal(w.code, 2, `${run}: ${w.stdout}`);
        const r = JSON.parse(w.stdout) as {
          counts: Record<string, number>;
          findings: { code: string; subject: string; message: string }[];
        };
        assert.equal(r.counts.refused_takeovers, 1, run);
        const f = r.findings.find((x) => x.code === "takeover_refused");
        assert.ok(f, `${run}: the refusal is reported`);
        assert.equal(f.subject, "f");
        assert.match(
          f.message,
          /^takeover of f refused 1 time\(s\) in the last 1d0h, last .* ago: /,
        );
      }
      const text = await cli(["check", ...s]);
      assert.match(text.stdout, /^WARNING: takeover of f refused 1 time/m);
      await sleep(300);
      const outside = JSON.parse(
        (await cli(["check", "--format", "json", "--window", "250ms", ...s])).stdout,
      ) as {
        counts: Record<string, number>;
      };
      assert.equal(outside.counts.refused_takeovers, 0, "older than the window: not reported");
    }));

  test("check: an unreachable store is UNKNOWN (exit 3)", async () => {
    const r = await cli(["check", "--store", "postgres://127.0.0.1:1/none"]);
    assert.equal(r.code, 3);
    assert.match(r.stdout, /^QUIESCE UNKNOWN - cannot reach the PostgreSQL store/);
  });

  test("incident: the markdown timeline names the owner, when it went stale, the evidence and who took over", () =>
    withLocation(b, "incident", async (url) => {
      const s = ["--store", url];
      await cli([
        "lock",
        "acquire",
        "host:db-9",
        "--ttl",
        "1s",
        "--owner-pid",
        String(deadPid()),
        "--note",
        "kernel patch",
        ...s,
      ]);
      await sleep(1200);
      assert.equal((await cli(["run", ...s, "--lease", "host:db-9", "--", "true"])).code, 0);
      const r = await cli(["incident", "host:db-9", ...s]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^# Incident record: host:db-9/);
      assert.match(r.stdout, /\| lease\.acquired \| 1 \|/);
      assert.match(r.stdout, /## When it went stale/);
      assert.match(r.stdout, /## Taken over: token 1 -> 2 at /);
      assert.match(r.stdout, /- local-process \(dead\): holder pid \d+ is gone/);
      assert.match(r.stdout, /- basis: probe_dead/);
      assert.equal(await showLease(url, "host:db-9"), null);
      const none = await cli(["incident", "never-used", ...s]);
      assert.equal(none.code, 2);
    }));
});
