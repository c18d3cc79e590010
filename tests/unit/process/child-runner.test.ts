import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { GroupChild } from "../../../src/process/child-runner.js";
import type { DeadlineSource } from "../../../src/process/deadline-guard.js";
import { tempDir } from "../../support/paths.js";

/** A lease's deadline as the guard sees it: `ms` from now, never renewed. */
function deadlineIn(ms: number): DeadlineSource {
  const until = performance.now() + ms;
  return { remainingMs: () => Math.max(0, until - performance.now()), onRenewed: () => () => {} };
}

const linux = process.platform === "linux";

/** A gate spawned before its lease (as `quiesce run` spawns it), running `script` under sh. */
function gated(script: string, launchGuard: boolean): Promise<GroupChild> {
  return GroupChild.start({
    command: { file: "/bin/sh", args: ["-c", script] },
    env: { ...process.env, QUIESCE_FENCING_TOKEN: "stale" },
    stdio: ["ignore", "ignore", "ignore"],
    gated: true,
    tokenAtOpen: true,
    launchGuard: launchGuard ? { graceMs: 200 } : undefined,
  });
}

for (const launchGuard of [false, true]) {
  const how = launchGuard ? "with the guard it starts" : "without a guard";
  test(`a gate spawned before the lease (${how}) hands the command the token it opens with`, async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const out = join(tmp.dir, "token");
    const child = await gated(`echo "$QUIESCE_FENCING_TOKEN" > ${out}`, launchGuard);
    if (launchGuard) child.guardDeadline(deadlineIn(60_000), 200);
    assert.equal(existsSync(out), false, "nothing ran before the gate opened");
    assert.ok(child.open(42));
    const exit = await child.exited;
    child.finish();
    assert.equal(exit.exitCode, 0);
    assert.equal(
      readFileSync(out, "utf8").trim(),
      "42",
      "the token of the lease, not the stale one",
    );
  });
}

test("a gate that never opens: its shell exits 125 and the command never runs", async (t) => {
  const tmp = tempDir();
  t.after(tmp.cleanup);
  const ran = join(tmp.dir, "ran");
  const child = await gated(`touch ${ran}`, linux);
  await child.close();
  const exit = await child.exited;
  assert.equal(exit.exitCode, 125);
  assert.equal(existsSync(ran), false);
});

test(
  "the guard a gate started, armed after the spawn, stops the command at the deadline",
  { skip: !linux && "Linux only" },
  async () => {
    const child = await gated("exec sleep 30", true);
    child.guardDeadline(deadlineIn(300), 200);
    assert.ok(child.open(7));
    const started = performance.now();
    const exit = await child.exited;
    const took = performance.now() - started;
    assert.equal(exit.signal, "SIGTERM", "terminated by its guard");
    assert.ok(took < 5_000, `at the deadline (300 ms), not later: ${Math.round(took)} ms`);
    assert.equal(await child.guard!.status(), "fired_running");
    assert.ok(child.guard!.pid !== undefined, "the guard said who it is");
    child.finish();
  },
);
