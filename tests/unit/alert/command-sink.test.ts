import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createCommandSink } from "../../../src/alert/command-sink.js";
import { isAlive, waitFor } from "../../support/cli.js";
import { tempDir } from "../../support/paths.js";
import { sampleAlert, within } from "./fixtures.js";

const T = { timeout: 20_000 };
const live = () => new AbortController().signal;

function scratch(t: { after: (fn: () => void) => void }): (name: string) => string {
  const tmp = tempDir("quiesce-alert-cmd-");
  t.after(tmp.cleanup);
  return (name) => join(tmp.dir, name);
}

describe("command sink", () => {
  test("the command gets the alert as one JSON line on stdin", T, async (t) => {
    const out = scratch(t)("alert.json");
    const alert = sampleAlert();
    const sink = createCommandSink({ command: 'cat > "$OUT"', env: { ...process.env, OUT: out } });
    await sink.send(alert, live());
    assert.equal(readFileSync(out, "utf8"), `${JSON.stringify(alert)}\n`);
  });

  test("kind, severity and scope are also in QUIESCE_ALERT_*", T, async (t) => {
    const out = scratch(t)("env.txt");
    const command =
      'printf "%s|%s|%s" "$QUIESCE_ALERT_KIND" "$QUIESCE_ALERT_SEVERITY" "$QUIESCE_ALERT_SCOPE" > "$OUT"';
    const sink = createCommandSink({ command, env: { ...process.env, OUT: out } });
    await sink.send(sampleAlert(), live());
    assert.equal(readFileSync(out, "utf8"), "lease.taken_over|critical|host:db-7");
  });

  test("a non-zero exit is a failure quoting the command's stderr", T, async () => {
    const sink = createCommandSink({ command: "echo 'pager: no route' >&2; exit 3" });
    await assert.rejects(sink.send(sampleAlert(), live()), {
      message: "alert command exited with code 3: pager: no route",
    });
  });

  test("a command that ignores its stdin and exits 0 is delivered", T, async () => {
    await createCommandSink({ command: "exit 0" }).send(sampleAlert(), live());
  });

  test("a command that hangs is killed at the timeout, with what it started", T, async (t) => {
    const pidFile = scratch(t)("pid");
    // The shell forks `sleep`: a kill of the shell alone would leave it running.
    const sink = createCommandSink({
      command: 'sleep 30 & echo $! > "$PIDFILE"; wait',
      timeoutMs: 300,
      env: { ...process.env, PIDFILE: pidFile },
    });
    await within(
      assert.rejects(sink.send(sampleAlert(), live()), {
        message: "alert command timed out after 300ms and was killed",
      }),
      10_000,
      "the timeout",
    );
    const sleepPid = Number(readFileSync(pidFile, "utf8"));
    assert.ok(sleepPid > 0);
    await waitFor("the forked sleep to be gone", () => !isAlive(sleepPid), 5000);
  });

  test("the caller's abort kills a running command", T, async (t) => {
    const pidFile = scratch(t)("pid");
    const sink = createCommandSink({
      command: 'echo $$ > "$PIDFILE"; sleep 30',
      env: { ...process.env, PIDFILE: pidFile },
    });
    const controller = new AbortController();
    const sent = sink.send(sampleAlert(), controller.signal);
    const shellPid = await waitFor("the pid file", () => {
      try {
        return Number(readFileSync(pidFile, "utf8")) || undefined;
      } catch {
        return undefined;
      }
    });
    controller.abort(new Error("stop"));
    await within(assert.rejects(sent, { message: "stop" }), 5000, "the abort");
    await waitFor("the command to be gone", () => !isAlive(shellPid), 5000);
  });
});
