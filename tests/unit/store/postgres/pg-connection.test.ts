import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  ErrorCode,
  isTransientStoreError,
  isUnsentStoreError,
} from "../../../../src/domain/errors.js";
import {
  type PgTarget,
  parsePgUrl,
  pgError,
} from "../../../../src/store/postgres/pg-connection.js";
import { assertQuiesceError, catchQuiesce } from "../../helpers.js";

describe("parsePgUrl: accepted URLs", () => {
  const cases: [string, PgTarget][] = [
    [
      "postgres://u:secret@h:5432/db?schema=quiesce",
      {
        connectionString: "postgres://u:secret@h:5432/db",
        schema: "quiesce",
        display: "postgres://u:***@h:5432/db",
      },
    ],
    [
      "postgres://u:secret@h/db",
      {
        connectionString: "postgres://u:secret@h/db",
        schema: "public",
        display: "postgres://u:***@h/db",
      },
    ],
    [
      "postgres://u@h/db",
      { connectionString: "postgres://u@h/db", schema: "public", display: "postgres://u@h/db" },
    ],
    [
      "postgresql://u@h/db?schema=_x1",
      { connectionString: "postgresql://u@h/db", schema: "_x1", display: "postgresql://u@h/db" },
    ],
    [
      "postgres://h/db?sslmode=require&schema=abc&x=1",
      {
        connectionString: "postgres://h/db?sslmode=require&x=1",
        schema: "abc",
        display: "postgres://h/db?sslmode=require&x=1",
      },
    ],
    [
      "postgres://u:p%40ss@h/db",
      {
        connectionString: "postgres://u:p%40ss@h/db",
        schema: "public",
        display: "postgres://u:***@h/db",
      },
    ],
    [
      "postgres://h/db?schema=a&schema=b",
      { connectionString: "postgres://h/db", schema: "a", display: "postgres://h/db" },
    ],
  ];
  for (const [url, want] of cases) {
    test(url, () => {
      assert.deepEqual(parsePgUrl(url), want);
    });
  }

  const schemas = ["public", "a", "_", "quiesce_test_42", "a".repeat(63)];
  for (const schema of schemas) {
    test(`schema ${JSON.stringify(schema.length > 20 ? `a x ${schema.length}` : schema)} is accepted and removed from the URL`, () => {
      const t = parsePgUrl(`postgres://u:pw@h/db?schema=${schema}`);
      assert.equal(t.schema, schema);
      assert.equal(t.connectionString, "postgres://u:pw@h/db");
      assert.doesNotMatch(t.connectionString, /schema=/);
    });
  }
});

describe("parsePgUrl: refused URLs", () => {
  const badSchemas: [string, string][] = [
    ["Bad", "Bad"],
    ["", ""],
    ["1a", "1a"],
    ["a-b", "a-b"],
    ["a%20b", "a b"],
    ["public%3Bdrop", "public;drop"],
    ["a".repeat(64), "a".repeat(64)],
  ];
  for (const [raw, schema] of badSchemas) {
    test(`schema ${JSON.stringify(schema.length > 20 ? `a x ${schema.length}` : schema)} is refused`, () => {
      assertQuiesceError(
        () => parsePgUrl(`postgres://u:pw@h/db?schema=${raw}`),
        ErrorCode.INVALID_INPUT,
        `--store: schema "${schema}" is not a valid schema name (lowercase letters, digits, _)`,
      );
    });
  }

  for (const url of ["not a url", "", "://h/db", "//h/db", "postgres://h/db with spaces"]) {
    test(`garbage ${JSON.stringify(url)} is refused`, () => {
      assertQuiesceError(
        () => parsePgUrl(url),
        ErrorCode.INVALID_INPUT,
        "--store: not a valid PostgreSQL URL (expected postgres://user@host:port/database)",
      );
    });
  }

  test("a refused URL is never echoed (it may hold a password)", () => {
    const e = catchQuiesce(() => parsePgUrl("postgres://u:se cret@h/db"));
    assert.equal(e.code, ErrorCode.INVALID_INPUT);
    assert.ok(!e.message.includes("se cret"), e.message);
  });

  // Odd forms go to the driver as written (it judges them); their display still hides the password.
  for (const [url, display] of [
    ["postgres://u:secret@h:99999/db", "postgres://u:***@h:99999/db"],
    ["postgres://u:p@ss@h:5432/db", "postgres://u:***@h:5432/db"],
    ["postgres://u:pa/ss@h/db", "postgres://u:***@h/db"],
  ] as const) {
    test(`the password of ${JSON.stringify(display)} is redacted`, () => {
      const t = parsePgUrl(url);
      assert.equal(t.display, display);
      assert.equal(t.connectionString, url);
    });
  }
});

describe("parsePgUrl: what node-postgres accepts", () => {
  test("a password given as a query parameter is removed from display", () => {
    const t = parsePgUrl("postgres://u@h/db?password=secret&schema=q");
    assert.equal(t.schema, "q");
    assert.equal(t.connectionString, "postgres://u@h/db?password=secret");
    assert.ok(!t.display.includes("secret"), t.display);
  });

  test("a Unix-socket URL with credentials and an empty host is accepted", () => {
    const url = "postgres://u:s3cr3t@/db?host=/var/run/postgresql&schema=q";
    const t = parsePgUrl(url);
    assert.equal(t.schema, "q");
    assert.doesNotMatch(t.connectionString, /schema=/);
    assert.match(t.connectionString, /s3cr3t/);
    assert.ok(!t.display.includes("s3cr3t"), t.display);
  });

  test("a Unix-socket URL without credentials is accepted", () => {
    assert.deepEqual(parsePgUrl("postgres:///db?host=/tmp&schema=x"), {
      connectionString: "postgres:///db?host=%2Ftmp",
      schema: "x",
      display: "postgres:///db?host=%2Ftmp",
    });
  });
});

describe("pgError: which failures were never sent", () => {
  const err = (message: string, props: Record<string, unknown>) =>
    Object.assign(new Error(message), props);
  const cases: [string, Error, { unsent?: boolean }, boolean, boolean][] = [
    // [what, driver error, pgError's option, transient, unsent]
    [
      "refused",
      err("connect ECONNREFUSED", { code: "ECONNREFUSED", syscall: "connect" }),
      {},
      true,
      true,
    ],
    [
      "no such host",
      err("getaddrinfo ENOTFOUND", { code: "ENOTFOUND", syscall: "getaddrinfo" }),
      {},
      true,
      true,
    ],
    [
      "server starting up",
      err("the database system is starting up", { code: "57P03" }),
      {},
      true,
      true,
    ],
    ["too many connections", err("too many clients", { code: "53300" }), {}, true, true],
    [
      "reset mid-statement",
      err("read ECONNRESET", { code: "ECONNRESET", syscall: "read" }),
      {},
      true,
      false,
    ],
    ["dropped mid-statement", err("Connection terminated unexpectedly", {}), {}, true, false],
    [
      "dropped while connecting",
      err("Connection terminated unexpectedly", {}),
      { unsent: true },
      true,
      true,
    ],
    ["server shutting down", err("terminating connection", { code: "57P01" }), {}, true, false],
    [
      "bad password, while connecting",
      err("password authentication failed", { code: "28P01" }),
      { unsent: true },
      false,
      false,
    ],
    ["a statement error", err("syntax error", { code: "42601" }), {}, false, false],
  ];
  for (const [what, e, o, transient, unsent] of cases) {
    test(`${what}: transient ${transient}, unsent ${unsent}`, () => {
      const q = pgError(e, "postgres://h/db", "write", o);
      assert.equal(q.code, ErrorCode.STORE_UNAVAILABLE);
      assert.equal(isTransientStoreError(q), transient);
      assert.equal(isUnsentStoreError(q), unsent);
    });
  }
});
