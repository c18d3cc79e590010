import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ErrorCode } from "../../../src/domain/errors.js";
import {
  MAX_NOTE_LENGTH,
  MAX_SCOPE_LENGTH,
  MAX_SYSTEM_LENGTH,
  parseToken,
  validateNote,
  validateScope,
  validateSystem,
} from "../../../src/domain/names.js";
import { assertQuiesceError } from "../helpers.js";

const show = (s: string) => JSON.stringify(s.length > 24 ? `${s.slice(0, 12)}...(${s.length})` : s);

describe("limits", () => {
  test("scope 200, system 64, note 1000 characters", () => {
    assert.equal(MAX_SCOPE_LENGTH, 200);
    assert.equal(MAX_SYSTEM_LENGTH, 64);
    assert.equal(MAX_NOTE_LENGTH, 1000);
  });
});

describe("validateScope", () => {
  const valid = [
    "a",
    "A",
    "9",
    "patch:wave",
    "host:db-7",
    "backup/nightly",
    "svc@db-7",
    "a+b=c",
    "x._:/@+=-y",
    "v1.2.3",
    "a".repeat(200),
  ];
  for (const scope of valid) {
    test(`${show(scope)} is accepted unchanged`, () => {
      assert.equal(validateScope(scope), scope);
    });
  }

  test("an empty scope is refused", () => {
    assertQuiesceError(
      () => validateScope(""),
      ErrorCode.INVALID_INPUT,
      "scope: the scope name is empty",
    );
  });

  const tooLong = ["a".repeat(201), "b".repeat(1000), "é".repeat(201)];
  for (const scope of tooLong) {
    test(`${show(scope)} is refused for its length before its characters`, () => {
      assertQuiesceError(
        () => validateScope(scope),
        ErrorCode.INVALID_INPUT,
        `scope: the scope name is ${scope.length} characters long; the limit is 200`,
      );
    });
  }

  const badChars = [
    "a b",
    " a",
    "a ",
    ".a",
    "-a",
    "_a",
    ":a",
    "/a",
    "@a",
    "+a",
    "=a",
    "é",
    "host:dé",
    "日本",
    "😀",
    "a\n",
    "a\tb",
    "a,b",
    "a*b",
    "a;b",
    "a$b",
    "a'b",
    'a"b',
    "a\\b",
    "a|b",
    "a#b",
  ];
  for (const scope of badChars) {
    test(`${JSON.stringify(scope)} is refused for its characters`, () => {
      assertQuiesceError(
        () => validateScope(scope),
        ErrorCode.INVALID_INPUT,
        `scope: "${scope}" is not a valid scope name (start with a letter or digit; then letters, digits and . _ : / @ + = - only)`,
      );
    });
  }

  test("the message names the given flag", () => {
    assertQuiesceError(
      () => validateScope("", "--scope"),
      ErrorCode.INVALID_INPUT,
      "--scope: the scope name is empty",
    );
    assertQuiesceError(
      () => validateScope("a b", "lock acquire"),
      ErrorCode.INVALID_INPUT,
      'lock acquire: "a b" is not a valid scope name (start with a letter or digit; then letters, digits and . _ : / @ + = - only)',
    );
  });
});

describe("validateSystem", () => {
  const valid = [
    "quiesce",
    "backup",
    "hypervisor",
    "a",
    "0",
    "a.b_c-d",
    "k8s-node",
    "a".repeat(64),
  ];
  for (const system of valid) {
    test(`${show(system)} is accepted unchanged`, () => {
      assert.equal(validateSystem(system), system);
    });
  }

  const invalid = [
    "",
    "Backup",
    "QUIESCE",
    "-a",
    "_a",
    ".a",
    "a b",
    "a/b",
    "a:b",
    "é",
    "a\n",
    "a".repeat(65),
  ];
  for (const system of invalid) {
    test(`${show(system)} is refused`, () => {
      assertQuiesceError(
        () => validateSystem(system),
        ErrorCode.INVALID_INPUT,
        `--system: "${system}" is not a valid system name (lowercase letters, digits, . _ -; at most 64)`,
      );
    });
  }

  test("the message names the given flag", () => {
    assertQuiesceError(
      () => validateSystem("X", "system"),
      ErrorCode.INVALID_INPUT,
      'system: "X" is not a valid system name (lowercase letters, digits, . _ -; at most 64)',
    );
  });
});

describe("validateNote", () => {
  const valid = ["", "patching kernel", "line 1\nline 2", "ünïcødé ✓", "x".repeat(1000)];
  for (const note of valid) {
    test(`${show(note)} is accepted unchanged`, () => {
      assert.equal(validateNote(note), note);
    });
  }

  for (const length of [1001, 5000]) {
    test(`a note of ${length} characters is refused`, () => {
      assertQuiesceError(
        () => validateNote("n".repeat(length)),
        ErrorCode.INVALID_INPUT,
        `--note: the note is ${length} characters; the limit is 1000`,
      );
    });
  }

  test("the message names the given flag", () => {
    assertQuiesceError(
      () => validateNote("n".repeat(1001), "note"),
      ErrorCode.INVALID_INPUT,
      "note: the note is 1001 characters; the limit is 1000",
    );
  });
});

describe("parseToken", () => {
  const valid: [string, number][] = [
    ["1", 1],
    ["12", 12],
    [" 12 ", 12],
    ["0012", 12],
    ["999999999999999", 999_999_999_999_999],
  ];
  for (const [text, token] of valid) {
    test(`${JSON.stringify(text)} is token ${token}`, () => {
      assert.equal(parseToken(text), token);
    });
  }

  const invalid = [
    "0",
    "000",
    "-1",
    "1.5",
    "abc",
    "",
    "  ",
    "12abc",
    "1e3",
    "0x10",
    "+1",
    "1 2",
    "١٢",
    "1000000000000000",
    "99999999999999999999",
  ];
  for (const text of invalid) {
    test(`${JSON.stringify(text)} is refused`, () => {
      assertQuiesceError(
        () => parseToken(text),
        ErrorCode.INVALID_INPUT,
        `--token: "${text}" is not a fencing token (a positive integer)`,
      );
    });
  }

  test("the message names the given flag", () => {
    assertQuiesceError(
      () => parseToken("0", "QUIESCE_TOKEN"),
      ErrorCode.INVALID_INPUT,
      'QUIESCE_TOKEN: "0" is not a fencing token (a positive integer)',
    );
  });
});
