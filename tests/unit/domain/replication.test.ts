import assert from "node:assert/strict";
import { test } from "node:test";
import { judgeReplication, type ReplicationFacts } from "../../../src/domain/replication.js";

const facts = (
  synchronousCommit: string,
  ...standbys: [string, string | null][]
): ReplicationFacts => ({
  synchronousCommit,
  synchronousStandbyNames: "",
  standbys: standbys.map(([name, syncState]) => ({ name, syncState })),
});

test("replication durability: which failovers can reissue a fencing token", () => {
  const table: [ReplicationFacts, string, boolean][] = [
    [facts("on"), "standalone", false],
    [facts("on", ["s1", "async"]), "asynchronous", true],
    [facts("on", ["s1", "potential"]), "asynchronous", true],
    [facts("on", ["s1", "sync"]), "synchronous", false],
    [facts("remote_apply", ["s1", "quorum"], ["s2", "quorum"]), "synchronous", false],
    [facts("remote_write", ["s1", "sync"], ["s2", "async"]), "synchronous", false],
    [facts("local", ["s1", "sync"]), "asynchronous", true],
    [facts("off", ["s1", "sync"]), "asynchronous", true],
    [facts("on", ["s1", null]), "unknown", false],
  ];
  for (const [f, durability, mayGoBack] of table) {
    const v = judgeReplication(f);
    assert.equal(v.durability, durability, JSON.stringify(f));
    assert.equal(v.tokensMayGoBack, mayGoBack, JSON.stringify(f));
  }
  assert.match(
    judgeReplication(facts("local", ["s1", "sync"])).summary,
    /synchronous_commit=local does not wait for the standby/,
  );
});
