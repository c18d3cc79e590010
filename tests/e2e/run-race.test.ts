import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { startCli } from "../support/cli.js";
import { eachBackend, events, showLease, withLocation } from "../support/e2e.js";
import { tempDir } from "../support/paths.js";

const RACERS = 20;

interface Hold {
  token: number;
  start: bigint;
  end: bigint;
}

/** Each holder appends "TOKEN start NS" and "TOKEN end NS" (wall clock, ns) around a short hold. */
function readHolds(file: string): Hold[] {
  const byToken = new Map<number, Partial<Hold>>();
  for (const line of readFileSync(file, "utf8").trim().split("\n")) {
    const [tok, what, ns] = line.split(" ");
    const h = byToken.get(Number(tok)) ?? { token: Number(tok) };
    if (what === "start") {
      assert.equal(h.start, undefined, `token ${tok} started twice`);
      h.start = BigInt(ns!);
    } else {
      h.end = BigInt(ns!);
    }
    byToken.set(Number(tok), h);
  }
  return [...byToken.values()].map((h) => h as Hold).sort((a, b) => (a.start < b.start ? -1 : 1));
}

await eachBackend("run: many processes race for one scope", (b) => {
  test(`${RACERS} processes started at once: never two holders, tokens strictly increasing (I1, I2)`, async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const log = join(tmp.dir, "holds.log");
    const hold = `echo "$QUIESCE_FENCING_TOKEN start $(date +%s%N)" >> ${log}; sleep 0.05; echo "$QUIESCE_FENCING_TOKEN end $(date +%s%N)" >> ${log}`;
    await withLocation(b, "race", async (url) => {
      const procs = Array.from({ length: RACERS }, () =>
        startCli([
          "run",
          "--store",
          url,
          "--lease",
          "race",
          "--ttl",
          "10s",
          "--wait",
          "180s",
          "--",
          "sh",
          "-c",
          hold,
        ]),
      );
      const results = await Promise.all(procs.map((p) => p.done));
      for (const r of results) assert.equal(r.code, 0, `a racer failed: ${r.stderr}`);

      const holds = readHolds(log);
      assert.equal(holds.length, RACERS, "every racer held the lease once");
      for (let i = 0; i < holds.length; i++) {
        const h = holds[i]!;
        assert.ok(
          h.end !== undefined && h.end >= h.start,
          `token ${h.token} has an end after its start`,
        );
        if (i > 0) {
          const prev = holds[i - 1]!;
          assert.ok(
            prev.end <= h.start,
            `token ${prev.token} was still held when token ${h.token} started`,
          );
          assert.ok(
            h.token > prev.token,
            `token ${h.token} follows ${prev.token} but is not greater`,
          );
        }
      }
      assert.equal(await showLease(url, "race"), null, "the last holder released");
      const ev = await events(url, "race");
      assert.equal(ev.filter((e) => e.kind === "lease.acquired").length, RACERS);
      assert.equal(ev.filter((e) => e.kind === "lease.released").length, RACERS);
    });
  });
});
