import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { isQuiesceError } from "../../src/domain/errors.js";
import { inTransaction, readRows } from "../../src/store/postgres/pg-tx.js";
import { PG_URL, pgExec, pgSkip } from "../support/pg.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The server ends a connection while the store has it out of the pool, between two statements
 * (pg_terminate_backend, a failover, an idle timeout). The connection's own "error" must not
 * crash the process (an EventEmitter error with no listener does), the work fails as one
 * store error, and the dead connection is not given to the next caller: the pool holds one
 * connection, so a reused dead one would fail the next statement too.
 */
test("a connection terminated between two statements fails that work only", async (t) => {
  const skip = await pgSkip();
  if (skip) return t.skip(skip);
  const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
  t.after(() => pool.end());
  const uncaught: unknown[] = [];
  const onUncaught = (e: unknown) => uncaught.push(e);
  process.on("uncaughtException", onUncaught);
  t.after(() => process.off("uncaughtException", onUncaught));

  for (let round = 0; round < 3; round++) {
    const failed = await inTransaction(pool, "test", "do two things", async (q) => {
      const [me] = await q<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      await pgExec("SELECT pg_terminate_backend($1)", [me!.pid]);
      await sleep(200); // the server's notice and the socket's end arrive while nothing runs
      await q("SELECT 1");
    }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(isQuiesceError(failed), `the work failed as a store error: ${String(failed)}`);
    assert.deepEqual(uncaught, [], "nothing reached the process as an uncaught error");
    const [row] = await readRows<{ one: number }>(pool, "test", "read", "SELECT 1 AS one");
    assert.equal(row!.one, 1, "the next caller got a live connection");
  }
});

/** The same when the server's notice arrives during a statement (the error is the query's). */
test("a connection terminated during a statement is not put back in the pool", async (t) => {
  const skip = await pgSkip();
  if (skip) return t.skip(skip);
  const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
  t.after(() => pool.end());
  for (let round = 0; round < 3; round++) {
    const [me] = await readRows<{ pid: number }>(
      pool,
      "test",
      "pid",
      "SELECT pg_backend_pid() AS pid",
    );
    // Its outcome is taken at once: it fails while the terminate below is still being sent.
    const slow = readRows(pool, "test", "sleep", "SELECT pg_sleep(2)").then(
      () => null,
      (e: unknown) => e,
    );
    await sleep(200);
    await pgExec("SELECT pg_terminate_backend($1)", [me!.pid]);
    const failed = await slow;
    assert.ok(isQuiesceError(failed), `the statement failed as a store error: ${String(failed)}`);
    const [row] = await readRows<{ one: number }>(pool, "test", "read", "SELECT 1 AS one");
    assert.equal(row!.one, 1, "the next caller got a live connection");
  }
});
