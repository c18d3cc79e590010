import assert from "node:assert/strict";
import { test } from "node:test";
import { openLeases, type Provider } from "../../src/index.js";
import { Journal } from "../../src/journal/journal.js";
import { cli } from "../support/cli.js";
import { eachBackend, events, hasNoStack, withLocation } from "../support/e2e.js";

interface ShowJson {
  run: { runId: string; state: string; seq: number; reviewReason: string | null };
  valid: boolean;
  effects: {
    key: string;
    state: string;
    seq: number;
    attempt: number;
    requestId: string | null;
    result: string | null;
    valid: boolean;
    problem: string | null;
  }[];
}

/** A provider that sends nothing it can vouch for: no keys, no lookup, and the answer is lost. */
const lossy: Provider = {
  name: "mail",
  capabilities: { idempotencyKey: false, statusLookup: false },
  dispatch: () => Promise.reject(new Error("connection reset")),
};
const good: Provider = {
  name: "pay",
  capabilities: { idempotencyKey: true, statusLookup: false },
  dispatch: (r) => Promise.resolve({ requestId: `req-${r.key}`, result: { ok: r.key } }),
};

/** A run with one OBSERVED effect and one quarantined, written through the library. */
async function seed(url: string): Promise<void> {
  await using leases = await openLeases({ store: url });
  const lease = await leases.acquire("runtime:agent-1", { ttl: "10s" });
  const j = new Journal(leases.store, lease, { runtimeId: "agent-1", providers: [lossy, good] });
  const run = await j.createRun({ runId: "run-1", checkpoint: { step: 1 } });
  await run.effect({ key: "invoice:1:charge", provider: "pay", request: { amount: 5 } });
  await run
    .effect({ key: "invoice:1:email", provider: "mail", context: { url: "https://mail/compose" } })
    .catch(() => undefined);
  await (await j.createRun({ runId: "run-2" })).complete();
}

await eachBackend("runs list/show/resolve", (b) => {
  test("a quarantined run is listed, shown with its effects, and resolved by a human", () =>
    withLocation(b, "runs", async (url) => {
      await seed(url);
      const all = JSON.parse((await cli(["runs", "list", "--json", "--store", url])).stdout) as {
        runs: { runId: string; state: string }[];
      };
      assert.deepEqual(all.runs.map((r) => `${r.runId}:${r.state}`).sort(), [
        "run-1:needs_review",
        "run-2:completed",
      ]);
      const review = await cli(["runs", "list", "--state", "needs_review", "--store", url]);
      assert.match(review.stdout, /^RUN +RUNTIME +STATE +SEQ +UPDATED +REASON$/m);
      assert.match(
        review.stdout,
        /^run-1 +agent-1 +needs_review +7 .*effect invoice:1:email quarantined/m,
      );
      assert.doesNotMatch(review.stdout, /run-2/);

      const show = JSON.parse(
        (await cli(["runs", "show", "run-1", "--json", "--store", url])).stdout,
      ) as ShowJson;
      assert.equal(show.run.state, "needs_review");
      assert.deepEqual(
        show.effects.map((e) => [e.key, e.state, e.seq, e.attempt, e.requestId, e.valid]),
        [
          ["invoice:1:charge", "OBSERVED", 4, 1, "req-invoice:1:charge", true],
          ["invoice:1:email", "NEEDS_REVIEW", 7, 1, null, true],
        ],
      );
      const text = await cli(["runs", "show", "run-1", "--store", url]);
      assert.match(text.stdout, /^state +needs_review \(effect invoice:1:email quarantined: /m);
      assert.match(
        text.stdout,
        /^invoice:1:email +NEEDS_REVIEW +7 +1 +- +valid +DISPATCHED without an acknowledgement/m,
      );

      const r = await cli([
        "runs",
        "resolve",
        "run-1",
        "--effect",
        "invoice:1:email",
        "--as",
        "observed",
        "--result",
        '{"delivered":true}',
        "--reason",
        "the mail log shows it was sent",
        "--operator",
        "ops",
        "--store",
        url,
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout,
        "resolved invoice:1:email of run run-1 as observed: now OBSERVED; run suspended\n",
      );
      const after = JSON.parse(
        (await cli(["runs", "show", "run-1", "--json", "--store", url])).stdout,
      ) as ShowJson;
      assert.deepEqual([after.run.state, after.run.seq, after.valid], ["suspended", 8, true]);
      assert.equal(after.effects[1]!.result, '{"delivered":true}');
      const ev = (await events(url, "runtime:agent-1")).filter(
        (e) => e.kind === "journal.effect_resolved",
      );
      assert.equal(ev.length, 1);
      assert.match(
        ev[0]!.message,
        /ops resolved effect invoice:1:email of run run-1 as observed: the mail log shows it was sent/,
      );
      assert.equal((ev[0]!.detail.before as { state: string }).state, "NEEDS_REVIEW");

      // The run can continue: a new holder resumes it and reads the resolved result.
      await using leases = await openLeases({ store: url });
      const lease = await leases.acquire("runtime:agent-1", { ttl: "10s" });
      const j = new Journal(leases.store, lease, {
        runtimeId: "agent-1",
        providers: [lossy, good],
      });
      const run = await j.resume("run-1");
      assert.deepEqual(await run.outcome("invoice:1:email"), { delivered: true });
      await run.complete();
    }));

  test("a record changed outside quiesce shows as INVALID and can only be resolved by a human", () =>
    withLocation(b, "runs-tamper", async (url) => {
      await seed(url);
      await b.rawSql(
        url,
        `UPDATE quiesce_effects SET result = '{"ok":"forged"}' WHERE key = 'invoice:1:charge'`,
      );
      const show = JSON.parse(
        (await cli(["runs", "show", "run-1", "--json", "--store", url])).stdout,
      ) as ShowJson;
      assert.equal(show.valid, false);
      assert.match(show.effects[0]!.problem ?? "", /checksum mismatch/);
      const text = await cli(["runs", "show", "run-1", "--store", url]);
      assert.match(text.stdout, /invoice:1:charge +OBSERVED .* INVALID: checksum mismatch/);
      const r = await cli([
        "runs",
        "resolve",
        "run-1",
        "--effect",
        "invoice:1:charge",
        "--as",
        "observed",
        "--reason",
        "checked the ledger",
        "--store",
        url,
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /still waiting for review: invoice:1:email/);
    }));

  test("bad input: one sentence, exit 2", () =>
    withLocation(b, "runs-bad", async (url) => {
      await seed(url);
      const resolve = ["runs", "resolve", "run-1", "--effect", "invoice:1:email", "--reason", "x"];
      const cases: [string[], RegExp][] = [
        [["runs", "show", "nope"], /no run nope in the journal/],
        [
          ["runs", "list", "--state", "sleeping"],
          /--state: "sleeping" is not a run state \(active, suspended, needs_review, completed, failed\)/,
        ],
        [[...resolve, "--as", "maybe"], /--as: "maybe" is not observed or not-sent/],
        [[...resolve, "--as", "observed", "--result", "{nope"], /--result: not valid JSON/],
        [
          [
            "runs",
            "resolve",
            "run-1",
            "--effect",
            "invoice:1:charge",
            "--as",
            "observed",
            "--reason",
            "x",
          ],
          /effect invoice:1:charge is OBSERVED and its record is valid/,
        ],
        [
          ["runs", "resolve", "run-1", "--effect", "nope", "--as", "observed", "--reason", "x"],
          /run run-1 has no effect nope \(its effects: invoice:1:charge, invoice:1:email\)/,
        ],
        [
          ["runs", "resolve", "run-1", "--effect", "invoice:1:email", "--as", "observed"],
          /required option '--reason <text>' not specified/,
        ],
      ];
      for (const [args, want] of cases) {
        const r = await cli([...args, "--store", url]);
        assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
        assert.match(r.stderr, want);
        assert.equal(r.stderr.trim().split("\n").length, 1);
        assert.ok(hasNoStack(r));
      }
    }));
});
