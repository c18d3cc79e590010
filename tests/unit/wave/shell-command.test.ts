import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { checkTemplate, fillTemplate, runShell } from "../../../src/wave/shell-command.js";
import { shellQuote } from "../../../src/process/shell-quote.js";
import { tempDir } from "../../support/paths.js";
import { catchQuiesce } from "../helpers.js";

describe("commands: {host} filled in, shell-quoted", () => {
  const cases: [string, Record<string, string>, string][] = [
    ["ssh {host} true", { host: "db-7" }, "ssh db-7 true"],
    ["echo {host} {wave} {group}", { host: "a.b", wave: "w1", group: "" }, "echo a.b w1 ''"],
    ["x {host}", { host: "it's; rm -rf /" }, `x 'it'\\''s; rm -rf /'`],
    ["{host}{host}", { host: "h" }, "hh"],
    ["no placeholders", { host: "h" }, "no placeholders"],
  ];
  for (const [t, vars, want] of cases) test(t, () => assert.equal(fillTemplate(t, vars), want));
  test("quoting round-trips through sh", async () => {
    const { execFileSync } = await import("node:child_process");
    for (const s of ["plain", "with space", "quote'd", '$(date) `x` "y"', ""])
      assert.equal(
        execFileSync("/bin/sh", ["-c", `printf %s ${shellQuote(s)}`], { encoding: "utf8" }),
        s,
      );
  });
});

describe("checkTemplate", () => {
  test("an unknown placeholder is a typo, refused", () =>
    assert.equal(
      catchQuiesce(() => checkTemplate("ssh {hots} true", "--patch")).message,
      "--patch: unknown placeholder {hots} (known: {host} {wave} {group})",
    ));
  test("empty", () =>
    assert.equal(
      catchQuiesce(() => checkTemplate("  ", "--check")).message,
      "--check: the command is empty",
    ));
  test("braces that are not placeholders pass (awk '{print $1}')", () =>
    assert.equal(checkTemplate("awk '{print $1}' {host}", "--patch"), "awk '{print $1}' {host}"));
});

describe("runShell: the pid is recorded before the command runs (the gate)", () => {
  const run = (
    command: string,
    beforeStart?: (pid: number) => Promise<void>,
    signal = new AbortController().signal,
  ) =>
    runShell({
      command,
      env: process.env,
      outputFd: null,
      signal,
      graceMs: 1000,
      ...(beforeStart ? { beforeStart } : {}),
    });

  test("the command starts only after beforeStart resolved, under the pid it was given", async () => {
    const t = tempDir();
    try {
      const marker = join(t.dir, "ran");
      let seen = 0;
      const e = await run(`echo $$ > ${marker}`, async (pid) => {
        seen = pid;
        await new Promise((r) => setTimeout(r, 50));
        assert.equal(existsSync(marker), false, "nothing ran before the gate opened");
      });
      assert.equal(e.exitCode, 0);
      assert.ok(seen > 0);
      assert.ok(existsSync(marker));
    } finally {
      t.cleanup();
    }
  });

  test("a refused beforeStart: the command never runs and the run fails with its error", async () => {
    const t = tempDir();
    try {
      const marker = join(t.dir, "ran");
      await assert.rejects(
        run(`touch ${marker}`, () => Promise.reject(new Error("lease lost"))),
        /lease lost/,
      );
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(existsSync(marker), false);
    } finally {
      t.cleanup();
    }
  });

  test("an abort gives the whole group its grace: a TERM trap under a shell that dies at once still finishes", async () => {
    const t = tempDir();
    try {
      const cleaned = join(t.dir, "cleaned");
      const ready = join(t.dir, "ready");
      const ac = new AbortController();
      // `; true` keeps the top shell from exec'ing the inner one: it dies of SIGTERM at once,
      // while the inner one spends 300 ms in its trap (a patch rolling back).
      const p = run(
        `sh -c 'trap "sleep 0.3; touch ${cleaned}; exit 0" TERM; touch ${ready}; while :; do sleep 0.02; done'; true`,
        undefined,
        ac.signal,
      );
      while (!existsSync(ready)) await new Promise((r) => setTimeout(r, 10));
      ac.abort();
      const e = await p;
      assert.equal(e.aborted, true);
      assert.ok(existsSync(cleaned), "the trap ran to its end before the run was answered");
    } finally {
      t.cleanup();
    }
  });

  test("an abort stops the command's process group", async () => {
    const ac = new AbortController();
    const p = run("sleep 30", undefined, ac.signal);
    setTimeout(() => ac.abort(), 100);
    const e = await p;
    assert.equal(e.aborted, true);
    assert.equal(e.exitCode, null);
  });
});
