import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { jobKey } from "../../src/ops/drill/jobs.js";
import { cli, waitFor, type CliResult } from "../support/cli.js";
import { eachBackend, withLocation } from "../support/e2e.js";
import { tempDir } from "../support/paths.js";
import { pgExec } from "../support/pg.js";
import { startAgent, waitRuntimeState, withRig } from "./journal-helpers.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface CheckJson {
  status: number;
  statusName: string;
  summary: string;
  findings: { severity: string; code: string; subject: string; message: string }[];
  counts: Record<string, number>;
}

/** name{labels} -> value of a Prometheus exposition; fails on a line that is not one. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-z_]+(?:\{[^}]*\})?) (-?[\d.e+]+)$/.exec(line);
    assert.ok(m, `a valid exposition line: ${line}`);
    out.set(m[1]!, Number(m[2]));
  }
  return out;
}

/** The three formats of one check, asserted to agree on the status and the findings' codes. */
async function checkAll(url: string, extra: string[] = []) {
  const s = [...extra, "--store", url];
  const text = await cli(["check", ...s]);
  const jsonRun = await cli(["check", "--format", "json", ...s]);
  const prom = await cli(["check", "--format", "prometheus", ...s]);
  const json = JSON.parse(jsonRun.stdout) as CheckJson;
  assert.equal(text.code, json.status);
  assert.equal(prom.code, json.status);
  const metrics = samples(prom.stdout);
  assert.equal(metrics.get("quiesce_check_status"), json.status);
  for (const f of json.findings) {
    const key = `quiesce_check_finding{severity="${f.severity}",code="${f.code}",subject="${f.subject}"}`;
    assert.equal(metrics.get(key), 1, `prometheus carries ${key}`);
  }
  // The text has the same findings in the same order (durations may differ by a tick).
  const lines = text.stdout.trimEnd().split("\n").slice(1);
  assert.deepEqual(
    lines.map((l) => l.slice(0, l.indexOf(":"))),
    json.findings.map((f) => f.severity.toUpperCase()),
  );
  json.findings.forEach((f, i) => assert.ok(lines[i]!.includes(f.subject), lines[i]));
  return { text, json, metrics };
}

await eachBackend("check: what blocks or endangers maintenance", (b) => {
  test("a run in needs_review (the drill, provider none, killed after dispatch) is a WARNING naming the resolve line", () =>
    withLocation(b, "check-review", async (url) => {
      const drill = await cli([
        ...["drill", "--provider", "none", "--point", "effect.after-dispatch", "--keep"],
        ...["--store", url],
      ]);
      assert.equal(drill.code, 0, drill.stdout + drill.stderr);
      const { text, json, metrics } = await checkAll(url);
      assert.equal(text.code, 1, text.stdout);
      const review = json.findings.filter((f) => f.code === "run_needs_review");
      assert.equal(review.length, 1);
      const runId = review[0]!.subject;
      assert.match(
        text.stdout,
        new RegExp(
          `^QUIESCE WARNING - run ${runId} of runtime \\S+ needs review \\(effect job:1:charge quarantined.*resolve: quiesce runs resolve ${runId} --effect job:1:charge --as observed\\|not-sent --reason "\\.\\.\\." \\| .*runs_needing_review=1`,
        ),
      );
      assert.equal(json.counts.runs_needing_review, 1);
      assert.equal(metrics.get("quiesce_runs_needs_review"), 1);
      // Resolved, it no longer waits for anyone.
      const resolve = await cli([
        ...["runs", "resolve", runId, "--effect", "job:1:charge", "--as", "not-sent"],
        ...["--reason", "provider log shows nothing", "--store", url],
      ]);
      assert.equal(resolve.code, 0, resolve.stderr);
      const after = await cli(["check", "--format", "json", "--store", url]);
      const j = JSON.parse(after.stdout) as CheckJson;
      assert.ok(!j.findings.some((f) => f.code === "run_needs_review"), after.stdout);
    }));

  test("a runtime stuck in DRAINING past its deadline (its agent killed mid-drain) is CRITICAL and heads the report, before a WARNING found first", () =>
    withLocation(b, "check-draining", async (url) =>
      withRig(url, "none", async ({ provider, store, agents }) => {
        const a = startAgent(url, "agent-d", provider, null, "1s");
        agents.push(a);
        await a.line("started", 20_000);
        provider.hold(jobKey("1"));
        provider.addJob("1");
        await waitFor("job 1's request", () => provider.requested(jobKey("1")) > 0, 20_000);
        const start = await cli([
          ...["maintenance", "start", "agent-d", "--id", "mw-7", "--drain-timeout", "1s"],
          ...["--store", url],
        ]);
        assert.equal(start.code, 0, start.stderr);
        await waitRuntimeState(store, "agent-d", "DRAINING");
        process.kill(a.pid, "SIGKILL"); // dies mid-drain: nobody decides at the deadline
        await a.exit(20_000);
        const rt = (await store.journal.getRuntime("agent-d")).runtime!;
        await sleep(Math.max(0, rt.deadlineAt! - Date.now()) + 300);
        // --max-hold 1ms: the leases collector (which runs first) finds a WARNING first.
        const { text, json } = await checkAll(url, ["--max-hold", "1ms"]);
        assert.equal(text.code, 2, text.stdout);
        assert.match(
          text.stdout,
          /^QUIESCE CRITICAL - (runtime agent-d is stuck in DRAINING .* past its deadline \(maintenance mw-7\) on \S+ pid \d+: its process is hung or gone; see quiesce maintenance status agent-d|runtime:agent-d expired .* ago and blocks its scope.*) \(and \d+ more\) \| /,
        );
        const sev = json.findings.map((f) => f.severity);
        assert.deepEqual(sev, [...sev].sort(), "every CRITICAL before any WARNING");
        assert.ok(
          json.findings.some((f) => f.code === "runtime_stuck_draining" && f.subject === "agent-d"),
        );
        assert.ok(json.findings.some((f) => f.code === "held_too_long"));
        assert.equal(json.counts.runtimes_stuck_draining, 1);
        const lines = text.stdout.trimEnd().split("\n").slice(1);
        const firstWarning = lines.findIndex((l) => l.startsWith("WARNING: "));
        assert.ok(
          firstWarning > 0 && lines.slice(firstWarning).every((l) => l.startsWith("WARNING: ")),
        );
        provider.release(jobKey("1"));
      }),
    ));

  test("UNKNOWN (3) when the store is corrupt or the arguments are wrong, in every format", () =>
    withLocation(b, "check-unknown", async (url) => {
      const usage: [string[], RegExp][] = [
        [["--bogus"], /^QUIESCE UNKNOWN - usage: unknown option '--bogus'/],
        [
          ["--max-hold"],
          /^QUIESCE UNKNOWN - usage: option '--max-hold <duration>' argument missing/,
        ],
        [["--window", "soon"], /^QUIESCE UNKNOWN - --window: "soon" is not a duration/],
        [["--format", "xml"], /^QUIESCE UNKNOWN - --format: "xml" is not one of/],
      ];
      await cli(["lock", "acquire", "x", "--ttl", "1m", "--store", url]);
      for (const [args, want] of usage) {
        const r = await cli(["check", "--store", url, ...args]);
        assert.equal(r.code, 3, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
        assert.match(r.stdout, want);
      }
      const j = await cli(["check", "--format", "json", "--window", "x", "--store", url]);
      assert.equal(j.code, 3);
      assert.equal((JSON.parse(j.stdout) as CheckJson).statusName, "UNKNOWN");
      const p = await cli(["check", "--format=prometheus", "--nope", "--store", url]);
      assert.equal(p.code, 3);
      assert.equal(samples(p.stdout).get("quiesce_check_status"), 3);

      if (b.name === "sqlite") {
        const t = tempDir("quiesce-corrupt-");
        try {
          const bad = join(t.dir, "quiesce.db");
          writeFileSync(bad, "this is not a database, just some bytes ".repeat(200));
          const r = await cli(["check", "--store", bad]);
          assert.equal(r.code, 3, r.stdout + r.stderr);
          assert.match(r.stdout, /^QUIESCE UNKNOWN - .*not a SQLite database/);
        } finally {
          t.cleanup();
        }
      } else {
        await b.rawSql(url, "UPDATE quiesce_meta SET value = '999' WHERE key = 'schema_version'");
        const r = await cli(["check", "--store", url]);
        assert.equal(r.code, 3, r.stdout + r.stderr);
        assert.match(
          r.stdout,
          /^QUIESCE UNKNOWN - the store .* has schema version 999, newer than this quiesce/,
        );
      }
    }));
});

/** Every command that only reads, with the arguments it needs. */
const READERS: string[][] = [
  ["lock", "list"],
  ["lock", "show", "a"],
  ["events"],
  ["incident", "a"],
  ["runs", "list"],
  ["runs", "show", "r-1"],
  ["wave", "status"],
  ["store", "info"],
  ["state", "get", "a"],
  ["maintenance", "status"],
];

function assertMissing(r: CliResult, where: string, args: string[]): void {
  assert.equal(r.code, 1, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
  assert.equal(
    r.stderr,
    `quiesce: no quiesce store at ${where}; quiesce creates it on first write\n`,
    args.join(" "),
  );
}

test("a mistyped SQLite store: read-only commands say so (exit 1, check 3) and create nothing; a write creates it", async () => {
  const t = tempDir("quiesce-missing-");
  try {
    const parent = join(t.dir, "typo");
    const path = join(parent, "quiesce.db");
    for (const args of READERS) assertMissing(await cli([...args, "--store", path]), path, args);
    for (const format of ["text", "json", "prometheus"]) {
      const r = await cli(["check", "--format", format, "--store", path]);
      assert.equal(r.code, 3, r.stdout);
      assert.match(
        r.stdout,
        /no quiesce store at .*typo\/quiesce\.db; quiesce creates it on first write/,
      );
    }
    // Through QUIESCE_STORE and the default file too (a HOME of its own).
    const env = { QUIESCE_STORE: path };
    assertMissing(await cli(["lock", "list"], env), path, ["lock", "list", "(env)"]);
    const home = join(t.dir, "home");
    const dflt = join(home, ".local", "state", "quiesce", "quiesce.db");
    const noEnv = { HOME: home, XDG_STATE_HOME: "", QUIESCE_STORE: "" };
    if (process.getuid?.() !== 0)
      assertMissing(await cli(["lock", "list"], noEnv), dflt, ["lock", "list", "(default)"]);
    assert.equal(existsSync(parent), false, "no directory appeared");
    assert.equal(existsSync(home), false);

    const w = await cli(["lock", "acquire", "a", "--ttl", "1m", "--store", path]);
    assert.equal(w.code, 0, w.stderr);
    assert.ok(existsSync(path), "a write creates the store");
    const ok = await cli(["check", "--store", path]);
    assert.equal(ok.code, 0, ok.stdout);
  } finally {
    t.cleanup();
  }
});

await eachBackend("a missing store", (b) => {
  if (b.name !== "postgres") return;
  test("a PostgreSQL schema that does not exist: read-only commands say so and create nothing", () =>
    withLocation(b, "missing", async (url) => {
      const shown = url.replace(/^postgresql:/, "postgres:");
      for (const args of READERS) {
        const r = await cli([...args, "--store", url]);
        assert.equal(r.code, 1, `${args.join(" ")}: ${r.stderr}`);
        assert.match(
          r.stderr,
          /^quiesce: no quiesce store at postgres.*; quiesce creates it on first write\n$/,
        );
      }
      const c = await cli(["check", "--store", shown]);
      assert.equal(c.code, 3, c.stdout);
      const schema = new URL(url).searchParams.get("schema")!;
      const rows = await pgExec(
        "SELECT 1 FROM information_schema.schemata WHERE schema_name = $1",
        [schema],
      );
      assert.equal(rows.length, 0, "no schema appeared");
      assert.equal((await cli(["lock", "acquire", "a", "--ttl", "1m", "--store", url])).code, 0);
      assert.equal((await cli(["check", "--store", url])).code, 0);
    }));
});
