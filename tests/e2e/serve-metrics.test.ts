import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { openLeases, type Provider } from "../../src/index.js";
import { Journal } from "../../src/journal/journal.js";
import { cli } from "../support/cli.js";
import { eachBackend, withLocation } from "../support/e2e.js";
import { REPO } from "../support/paths.js";
import { get, startServe } from "../support/serve.js";
import { makeFleet } from "./wave-helpers.js";

const PROMTOOL = "/usr/bin/promtool";
const promtoolMissing = existsSync(PROMTOOL)
  ? false
  : `${PROMTOOL} is not installed (Debian package prometheus)`;
if (promtoolMissing && process.env.CI === "true") throw new Error(`${promtoolMissing} (CI=true)`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const deadPid = () =>
  Number(spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim());

const lossy: Provider = {
  name: "mail",
  capabilities: { idempotencyKey: false, statusLookup: false },
  dispatch: () => Promise.reject(new Error("connection reset")),
};

/** `name{labels}` -> value, for every sample of the exposition. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

function promtool(args: string[], input?: string) {
  return spawnSync(PROMTOOL, args, { input, encoding: "utf8" });
}

test("the README's alert rules pass promtool check rules", { skip: promtoolMissing }, () => {
  const r = promtool(["check", "rules", join(REPO, "docs", "prometheus", "quiesce-alerts.yml")]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /SUCCESS: 2 rules found/);
});

await eachBackend("serve: /metrics", (b) => {
  test(
    "passes promtool check metrics and holds the values of a known state; counters count each event once",
    { skip: promtoolMissing },
    () =>
      withLocation(b, "serve-metrics", async (url) => {
        const s = ["--store", url];
        const fleet = makeFleet(3);
        try {
          await cli(["lock", "acquire", "live-1", "--ttl", "5m", ...s]);
          for (const scope of ["host:dead", "host:gone"])
            await cli([
              "lock",
              "acquire",
              scope,
              "--ttl",
              "1s",
              "--owner-pid",
              String(deadPid()),
              ...s,
            ]);
          await cli(["lock", "acquire", "f", "--ttl", "1s", "--system", "backup", ...s]);
          await cli(["wave", "create", "w", "--hosts", fleet.hostsFile, ...s]);
          {
            await using leases = await openLeases({ store: url });
            const lease = await leases.acquire("runtime:agent-1", { ttl: "10s" });
            const j = new Journal(leases.store, lease, {
              runtimeId: "agent-1",
              providers: [lossy],
            });
            const run = await j.createRun({ runId: "run-1" });
            await run.effect({ key: "k:1", provider: "mail" }).catch(() => undefined);
          }
          await sleep(1200);
          assert.equal((await cli(["lock", "takeover", "host:gone", ...s])).code, 0);
          assert.equal((await cli(["lock", "takeover", "f", ...s])).code, 75, "foreign: refused");

          const srv = await startServe(url);
          try {
            const r = await get(srv.base, "/metrics");
            assert.equal(r.status, 200);
            assert.match(r.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
            const lint = promtool(["check", "metrics"], r.text);
            assert.equal(lint.status, 0, `promtool: ${lint.stdout}${lint.stderr}`);
            const m = samples(r.text);
            const expect: [string, number][] = [
              ["quiesce_store_up", 1],
              ["quiesce_check_status", 2],
              ['quiesce_leases{state="live"}', 1],
              ['quiesce_leases{state="expired"}', 2],
              ["quiesce_leases_expired_unreleased", 2],
              ["quiesce_takeovers_total", 1],
              ["quiesce_takeovers_refused_total", 1],
              ["quiesce_lease_breaks_total", 0],
              ['quiesce_runs{state="needs_review"}', 1],
              ['quiesce_runs{state="active"}', 0],
              ['quiesce_effects{state="NEEDS_REVIEW"}', 1],
              ['quiesce_review_queue{kind="run"}', 1],
              ['quiesce_review_queue{kind="wave_host"}', 0],
              ['quiesce_wave_hosts{wave="w",state="pending"}', 3],
              ['quiesce_wave_hosts{wave="w",state="succeeded"}', 0],
            ];
            for (const [k, v] of expect) assert.equal(m.get(k), v, k);
            const age = m.get(
              'quiesce_lease_heartbeat_age_seconds{scope="live-1",system="quiesce"}',
            );
            assert.ok(age !== undefined && age >= 0 && age < 120, `heartbeat age ${age}`);
            assert.ok(m.has("process_resident_memory_bytes"), "process metrics");
            assert.ok(![...m.keys()].some((k) => k.includes("run-1")), "no run id as a label");

            // A second scrape does not count the same events again; a new takeover counts once.
            assert.equal(
              samples((await get(srv.base, "/metrics")).text).get("quiesce_takeovers_total"),
              1,
            );
            assert.equal((await cli(["lock", "takeover", "host:dead", ...s])).code, 0);
            const after = samples((await get(srv.base, "/metrics")).text);
            assert.equal(after.get("quiesce_takeovers_total"), 2);
            assert.equal(after.get("quiesce_leases_expired_unreleased"), 1);
            assert.equal(
              after.get('quiesce_lease_heartbeat_age_seconds{scope="host:dead",system="quiesce"}'),
              undefined,
              "a released lease's series is gone",
            );
          } finally {
            await srv.stop();
          }
        } finally {
          fleet.cleanup();
        }
      }),
  );
});
