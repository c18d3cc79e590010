import assert from "node:assert/strict";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { test } from "node:test";
import { isQuiesceError, isTransientStoreError } from "../../../../src/domain/errors.js";
import { createPool, parsePgUrl } from "../../../../src/store/postgres/pg-connection.js";
import { readRows } from "../../../../src/store/postgres/pg-tx.js";

/** One backend message: its type byte, its length (itself included) and its body. */
function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/** An ErrorResponse: the fields as PostgreSQL sends them (code letter, text, NUL), then a NUL. */
function errorResponse(fields: Record<string, string>): Buffer {
  const parts = Object.entries(fields).map(([k, v]) => Buffer.from(`${k}${v}\0`, "latin1"));
  return message("E", Buffer.concat([...parts, Buffer.from([0])]));
}

/**
 * A server that speaks just enough of PostgreSQL's protocol to accept a connection (trust, no
 * password), and then ends it the way pg_terminate_backend does to a session that has just
 * become ready: ReadyForQuery, the FATAL 57P01 and the end of the stream, in one write, so
 * that the client reads them in one chunk.
 */
async function serverThatEndsSessionsWhenReady(): Promise<{ port: number; close(): void }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    socket.once("data", () => {
      // The startup message (length, protocol 3.0, parameters): answered, not read.
      const keyData = Buffer.alloc(8);
      keyData.writeInt32BE(4242, 0);
      keyData.writeInt32BE(7, 4);
      socket.end(
        Buffer.concat([
          message("R", Buffer.from([0, 0, 0, 0])), // AuthenticationOk
          message("K", keyData),
          message("Z", Buffer.from("I", "latin1")), // ReadyForQuery
          errorResponse({
            S: "FATAL",
            V: "FATAL",
            C: "57P01",
            M: "terminating connection due to administrator command",
          }),
        ]),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/**
 * The pool hands a new connection to its caller in the same read that made it ready; the
 * caller attaches its own error listener a moment later. A termination that arrives in that
 * read (the test of `quiesce run` under pg_terminate_backend hit it in CI: "internal error:
 * terminating connection due to administrator command", and the next renewal was given the
 * dead connection) must not reach the process as an uncaught error: the work fails as one
 * store error that a holder retries, and the dead connection is not used again.
 */
test("a connection the server ends as it becomes ready fails that work only", async (t) => {
  const server = await serverThatEndsSessionsWhenReady();
  t.after(() => server.close());
  const pool = createPool(parsePgUrl(`postgres://quiesce@127.0.0.1:${server.port}/test`));
  t.after(() => pool.end().catch(() => undefined));
  const uncaught: unknown[] = [];
  const onUncaught = (e: unknown) => uncaught.push(e);
  process.on("uncaughtException", onUncaught);
  t.after(() => process.off("uncaughtException", onUncaught));

  for (let round = 0; round < 3; round++) {
    const failed = await readRows(pool, "test", "read the clock", "SELECT 1").then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(isQuiesceError(failed), `the work failed as a store error: ${String(failed)}`);
    assert.ok(isTransientStoreError(failed), "one a holder or a waiter tries again");
    await new Promise((r) => setTimeout(r, 50)); // the socket's end, after the error
    assert.deepEqual(
      uncaught.map((e) => (e as Error).message),
      [],
      "nothing reached the process as an uncaught error",
    );
  }
  assert.equal(pool.totalCount, 0, "no dead connection was kept in the pool");
});
