import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ErrorCode } from "../../../src/domain/errors.js";
import {
  type StoreTarget,
  defaultSqlitePath,
  resolveStore,
} from "../../../src/store/open-store.js";
import { assertQuiesceError, catchQuiesce } from "../helpers.js";

const ROOT_DB = "/var/lib/quiesce/quiesce.db";
const ALICE = 1000;

describe("defaultSqlitePath", () => {
  const cases: { name: string; env: NodeJS.ProcessEnv; uid: number; path: string }[] = [
    { name: "root, empty environment", env: {}, uid: 0, path: ROOT_DB },
    {
      name: "root ignores XDG_STATE_HOME and HOME",
      env: { XDG_STATE_HOME: "/xdg/state", HOME: "/root" },
      uid: 0,
      path: ROOT_DB,
    },
    {
      name: "a user with XDG_STATE_HOME",
      env: { XDG_STATE_HOME: "/xdg/state", HOME: "/home/alice" },
      uid: ALICE,
      path: "/xdg/state/quiesce/quiesce.db",
    },
    {
      name: "a user with XDG_STATE_HOME ending in a slash",
      env: { XDG_STATE_HOME: "/xdg/state/" },
      uid: ALICE,
      path: "/xdg/state/quiesce/quiesce.db",
    },
    {
      name: "no getuid (uid -1) is treated as a user",
      env: { XDG_STATE_HOME: "/xdg/state" },
      uid: -1,
      path: "/xdg/state/quiesce/quiesce.db",
    },
    // The env parameter is the environment to honour: the per-user fallback must come from
    // its HOME, not from the HOME of the process running the code.
    {
      name: "a user without XDG_STATE_HOME: $HOME/.local/state of the given env",
      env: { HOME: "/home/alice" },
      uid: ALICE,
      path: "/home/alice/.local/state/quiesce/quiesce.db",
    },
  ];
  for (const { name, env, uid, path } of cases) {
    test(`${name}: ${path}`, () => {
      assert.equal(defaultSqlitePath(env, uid), path);
    });
  }

  for (const xdg of ["relative/state", "./state", "~/state", ""]) {
    test(`XDG_STATE_HOME=${JSON.stringify(xdg)} (not absolute) is ignored`, () => {
      const withXdg = defaultSqlitePath({ XDG_STATE_HOME: xdg, HOME: "/home/alice" }, ALICE);
      const without = defaultSqlitePath({ HOME: "/home/alice" }, ALICE);
      assert.equal(withXdg, without);
      assert.ok(withXdg.startsWith("/"), withXdg);
      assert.ok(withXdg.endsWith("/.local/state/quiesce/quiesce.db"), withXdg);
    });
  }
});

describe("resolveStore", () => {
  const sqlite = (path: string): StoreTarget => ({ backend: "sqlite", path });
  const postgres = (url: string): StoreTarget => ({ backend: "postgres", url });

  const precedence: {
    name: string;
    flag: string | undefined;
    env: NodeJS.ProcessEnv;
    want: StoreTarget;
  }[] = [
    {
      name: "flag beats QUIESCE_STORE",
      flag: "/f.db",
      env: { QUIESCE_STORE: "/e.db" },
      want: sqlite("/f.db"),
    },
    {
      name: "a postgres flag beats a sqlite QUIESCE_STORE",
      flag: "postgres://h/db",
      env: { QUIESCE_STORE: "/e.db" },
      want: postgres("postgres://h/db"),
    },
    {
      name: "a sqlite flag beats a postgres QUIESCE_STORE",
      flag: "sqlite:/f.db",
      env: { QUIESCE_STORE: "postgres://h/db" },
      want: sqlite("/f.db"),
    },
    {
      name: "QUIESCE_STORE without a flag",
      flag: undefined,
      env: { QUIESCE_STORE: "/e.db" },
      want: sqlite("/e.db"),
    },
    {
      name: "a postgres QUIESCE_STORE without a flag",
      flag: undefined,
      env: { QUIESCE_STORE: "postgresql://u@h:5432/db?schema=q" },
      want: postgres("postgresql://u@h:5432/db?schema=q"),
    },
  ];
  for (const { name, flag, env, want } of precedence) {
    test(name, () => {
      assert.deepEqual(resolveStore(flag, env), want);
    });
  }

  // resolveStore takes no uid: the default depends on who runs the test, so the expectation
  // is computed for both cases with an environment that pins the non-root answer.
  const expectedDefault = process.getuid?.() === 0 ? ROOT_DB : "/xdg/state/quiesce/quiesce.db";
  const defaults: [string, NodeJS.ProcessEnv][] = [
    ["neither flag nor QUIESCE_STORE: the default file", { XDG_STATE_HOME: "/xdg/state" }],
    ["an empty QUIESCE_STORE counts as unset", { QUIESCE_STORE: "", XDG_STATE_HOME: "/xdg/state" }],
  ];
  for (const [name, env] of defaults) {
    test(name, () => {
      assert.deepEqual(resolveStore(undefined, env), sqlite(expectedDefault));
      assert.equal(defaultSqlitePath(env), expectedDefault);
    });
  }

  const targets: [string, StoreTarget][] = [
    ["sqlite:/x", sqlite("/x")],
    ["sqlite:/var/lib/quiesce/q.db", sqlite("/var/lib/quiesce/q.db")],
    ["sqlite:///var/lib/quiesce/q.db", sqlite("/var/lib/quiesce/q.db")],
    ["sqlite:rel.db", sqlite("rel.db")],
    ["/var/lib/quiesce/q.db", sqlite("/var/lib/quiesce/q.db")],
    ["./rel.db", sqlite("./rel.db")],
    ["q.db", sqlite("q.db")],
    ["/path with spaces/q.db", sqlite("/path with spaces/q.db")],
    ["postgres://u:pw@h:5432/db", postgres("postgres://u:pw@h:5432/db")],
    ["postgresql://h/db?schema=q", postgres("postgresql://h/db?schema=q")],
    ["POSTGRES://h/db", postgres("POSTGRES://h/db")],
    ["PostgreSQL://h/db", postgres("PostgreSQL://h/db")],
  ];
  for (const [spec, want] of targets) {
    test(`${JSON.stringify(spec)} -> ${want.backend}`, () => {
      assert.deepEqual(resolveStore(spec, {}), want);
      assert.deepEqual(resolveStore(undefined, { QUIESCE_STORE: spec }), want);
    });
  }

  const unsupported: [string, string][] = [
    ["redis://x", "redis"],
    ["mysql://h/db", "mysql"],
    ["http://h/db", "http"],
    ["file:///x.db", "file"],
    ["postgres+ssl://h/db", "postgres+ssl"],
    ["postgre://h/db", "postgre"],
  ];
  for (const [spec, scheme] of unsupported) {
    test(`${JSON.stringify(spec)} is refused`, () => {
      assertQuiesceError(
        () => resolveStore(spec, {}),
        ErrorCode.INVALID_INPUT,
        `--store: "${scheme}://" stores are not supported; use a file path, sqlite:PATH or postgres://...`,
      );
    });
  }

  for (const spec of ["", "   ", "\t"]) {
    test(`the flag ${JSON.stringify(spec)} is refused as empty`, () => {
      assertQuiesceError(
        () => resolveStore(spec, { QUIESCE_STORE: "/e.db" }),
        ErrorCode.INVALID_INPUT,
        "--store: the store location is empty",
      );
    });
  }

  test("a blank (not empty) QUIESCE_STORE is refused, not replaced by the default", () => {
    const e = catchQuiesce(() => resolveStore(undefined, { QUIESCE_STORE: "   " }));
    assert.equal(e.code, ErrorCode.INVALID_INPUT);
    assert.match(e.message, /the store location is empty/);
  });

  test('"sqlite:" without a path is refused', () => {
    assertQuiesceError(
      () => resolveStore("sqlite:", {}),
      ErrorCode.INVALID_INPUT,
      "--store: sqlite: needs a file path, e.g. sqlite:/var/lib/quiesce/quiesce.db",
    );
  });
});
