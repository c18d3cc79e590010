import assert from "node:assert/strict";
import { test } from "node:test";
import { COMMANDS, requestedCommand } from "../../../src/cli/command-table.js";

// The CLI loads only the module of the command argv names; a wrong answer here would make a
// command unknown (null means: load them all, which is always safe).
test("the subcommand is found past the global options", () => {
  assert.equal(requestedCommand(["run", "--lease", "S", "--", "true"]), "run");
  assert.equal(requestedCommand(["--store", "x.db", "lock", "list"]), "lock");
  assert.equal(requestedCommand(["--store=x.db", "--config", "q.yaml", "wave", "status"]), "wave");
  assert.equal(requestedCommand(["--config=q.yaml", "runs", "list"]), "runs");
});

test("help, version, unknown names and no command load every command", () => {
  for (const argv of [[], ["--help"], ["-V"], ["help", "run"], ["runz"], ["--store", "x"]])
    assert.equal(requestedCommand(argv), null, JSON.stringify(argv));
});

test("every command quiesce --help lists has a loader", () => {
  assert.deepEqual(Object.keys(COMMANDS), [
    ...["run", "lock", "state", "events", "store", "check", "incident"],
    ...["runs", "maintenance", "drill", "wave", "audit", "serve"],
  ]);
});
