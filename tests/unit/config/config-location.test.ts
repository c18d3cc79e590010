import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import {
  type ConfigLocation,
  configLocation,
  loadConfigFile,
} from "../../../src/config/config-location.js";
import { ErrorCode } from "../../../src/domain/errors.js";
import { tempDir } from "../../support/paths.js";
import { assertQuiesceError, catchQuiesce } from "../helpers.js";

const ALICE = 1000;
const ETC = "/etc/quiesce/quiesce.yaml";

describe("configLocation", () => {
  const cases: {
    name: string;
    flag?: string;
    env: NodeJS.ProcessEnv;
    uid: number;
    want: ConfigLocation;
  }[] = [
    {
      name: "--config wins over QUIESCE_CONFIG",
      flag: "./mine.yaml",
      env: { QUIESCE_CONFIG: "/env.yaml" },
      uid: ALICE,
      want: { path: "./mine.yaml", explicit: true, source: "--config" },
    },
    {
      name: "QUIESCE_CONFIG wins over the default",
      env: { QUIESCE_CONFIG: "/env.yaml", XDG_CONFIG_HOME: "/xdg" },
      uid: 0,
      want: { path: "/env.yaml", explicit: true, source: "QUIESCE_CONFIG" },
    },
    {
      name: "an empty QUIESCE_CONFIG is unset",
      env: { QUIESCE_CONFIG: "" },
      uid: 0,
      want: { path: ETC, explicit: false, source: "default" },
    },
    {
      name: "root reads the system file, whatever XDG says",
      env: { XDG_CONFIG_HOME: "/xdg", HOME: "/root" },
      uid: 0,
      want: { path: ETC, explicit: false, source: "default" },
    },
    {
      name: "a user with XDG_CONFIG_HOME",
      env: { XDG_CONFIG_HOME: "/xdg", HOME: "/home/alice" },
      uid: ALICE,
      want: { path: "/xdg/quiesce/quiesce.yaml", explicit: false, source: "default" },
    },
    {
      name: "a user without XDG_CONFIG_HOME: ~/.config of the given HOME",
      env: { HOME: "/home/alice" },
      uid: ALICE,
      want: {
        path: "/home/alice/.config/quiesce/quiesce.yaml",
        explicit: false,
        source: "default",
      },
    },
    {
      name: "a relative XDG_CONFIG_HOME is ignored",
      env: { XDG_CONFIG_HOME: "rel/config", HOME: "/home/alice" },
      uid: ALICE,
      want: {
        path: "/home/alice/.config/quiesce/quiesce.yaml",
        explicit: false,
        source: "default",
      },
    },
  ];
  for (const { name, flag, env, uid, want } of cases) {
    test(name, () => assert.deepEqual(configLocation(flag, env, uid), want));
  }

  test("an empty --config is an error", () => {
    assertQuiesceError(
      () => configLocation("  ", {}, ALICE),
      ErrorCode.INVALID_INPUT,
      "--config: the path is empty",
    );
  });
});

describe("loadConfigFile", () => {
  test("a missing default file is fine: no config", (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const location = configLocation(undefined, { XDG_CONFIG_HOME: tmp.dir }, ALICE);
    assert.equal(loadConfigFile(location), null);
  });

  test("a default location under a file (not a directory) is missing too", (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    writeFileSync(join(tmp.dir, "quiesce"), "not a directory");
    const location = configLocation(undefined, { XDG_CONFIG_HOME: tmp.dir }, ALICE);
    assert.equal(loadConfigFile(location), null);
  });

  test("the default file, when it exists, is read and validated", (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    mkdirSync(join(tmp.dir, "quiesce"));
    const path = join(tmp.dir, "quiesce", "quiesce.yaml");
    writeFileSync(path, "system: backup\n");
    const location = configLocation(undefined, { XDG_CONFIG_HOME: tmp.dir }, ALICE);
    assert.deepEqual(loadConfigFile(location), { path, file: { system: "backup" } });
    writeFileSync(path, "system: Backup\n");
    assert.match(
      catchQuiesce(() => loadConfigFile(location)).message,
      /^\/.*\/quiesce\.yaml: system: "Backup" is not/,
    );
  });

  for (const source of ["--config", "QUIESCE_CONFIG"] as const) {
    test(`a file named by ${source} that does not exist is an error`, (t) => {
      const tmp = tempDir();
      t.after(tmp.cleanup);
      const path = join(tmp.dir, "nope.yaml");
      const location =
        source === "--config"
          ? configLocation(path, {}, ALICE)
          : configLocation(undefined, { QUIESCE_CONFIG: path }, ALICE);
      assertQuiesceError(
        () => loadConfigFile(location),
        ErrorCode.INVALID_INPUT,
        `${source}: ${path} does not exist`,
      );
    });
  }

  test("a directory where the file should be is an error, even at the default location", (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const path = join(tmp.dir, "quiesce", "quiesce.yaml");
    mkdirSync(path, { recursive: true });
    const location = configLocation(undefined, { XDG_CONFIG_HOME: tmp.dir }, ALICE);
    assertQuiesceError(
      () => loadConfigFile(location),
      ErrorCode.INVALID_INPUT,
      `${path} is a directory, not a config file`,
    );
  });

  test("an unreadable default file is an error, not silently skipped", () => {
    const location: ConfigLocation = { path: ETC, explicit: false, source: "default" };
    const denied = () => {
      throw Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
    };
    const e = catchQuiesce(() => loadConfigFile(location, denied));
    assert.equal(e.code, ErrorCode.INVALID_INPUT);
    assert.equal(e.message, `${ETC} cannot be read (permission denied)`);
    assert.ok(e.cause instanceof Error, "the read error is chained");
  });
});
