import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  hostRunId,
  parseBatch,
  parseFailureBudget,
  parseHostsFile,
  parsePositiveInt,
  patchKey,
  validateWaveName,
} from "../../../src/domain/wave-input.js";
import { catchQuiesce } from "../helpers.js";

describe("hosts file: what is accepted", () => {
  const cases: [string, string, { host: string; group: string | null }[]][] = [
    ["one host", "db-1\n", [{ host: "db-1", group: null }]],
    [
      "groups, blanks and comments",
      "# fleet\n\ndb-1 group=db\nweb-1   group=web # front\n  web-2\n",
      [
        { host: "db-1", group: "db" },
        { host: "web-1", group: "web" },
        { host: "web-2", group: null },
      ],
    ],
    [
      "CRLF line ends",
      "a\r\nb\r\n",
      [
        { host: "a", group: null },
        { host: "b", group: null },
      ],
    ],
    ["dotted names", "db-1.dc2.example.com", [{ host: "db-1.dc2.example.com", group: null }]],
  ];
  for (const [name, text, want] of cases)
    test(name, () => assert.deepEqual(parseHostsFile(text, "w1"), want));
  test("the order of the file is the order of the wave", () =>
    assert.deepEqual(
      parseHostsFile("c\nb\na\n", "w1").map((h) => h.host),
      ["c", "b", "a"],
    ));
});

describe("hosts file: one sentence for each mistake", () => {
  const cases: [string, string, string][] = [
    ["empty", "", "hosts file: no hosts (one host a line, optionally followed by group=NAME)"],
    [
      "only comments",
      "# nothing\n\n",
      "hosts file: no hosts (one host a line, optionally followed by group=NAME)",
    ],
    [
      "a duplicate",
      "a\nb\na\n",
      "hosts file: host a is listed twice (lines 1 and 3); list each host once",
    ],
    [
      "an unknown field",
      "a rack=3\n",
      'hosts file line 1: unknown field "rack=3" (only group=NAME may follow a host)',
    ],
    ["group twice", "a group=x group=y\n", "hosts file line 1: group= is given twice"],
    [
      "an empty group",
      "a group=\n",
      'hosts file line 1: group "" is not valid (letters, digits and . _ - only, at most 64)',
    ],
    [
      "a bad host name",
      "x\nroot@db\n",
      'hosts file line 2: "root@db" is not a host name (letters, digits and . _ - only, starting with a letter or digit)',
    ],
    [
      "a host name too long for the journal's run id",
      `${"h".repeat(120)}\n`,
      `hosts file line 1: host name ${"h".repeat(120)} is 120 characters; a wave named w1 allows at most 112`,
    ],
  ];
  for (const [name, text, message] of cases)
    test(name, () => {
      const e = catchQuiesce(() => parseHostsFile(text, "w1"));
      assert.equal(e.code, "INVALID_INPUT");
      assert.equal(e.message, message);
    });
  test("the source is named", () =>
    assert.match(catchQuiesce(() => parseHostsFile("", "w1", "stdin")).message, /^stdin: /));
});

describe("--batch: a count or a share, at least one host", () => {
  const ok: [string, number, number, string][] = [
    ["1", 50, 1, "count"],
    ["5", 50, 5, "count"],
    ["80", 50, 50, "count"], // more than the wave: one batch
    ["10%", 50, 5, "percent"],
    ["10%", 15, 2, "percent"], // rounded up
    ["10%", 30, 3, "percent"], // 10% of 30 is exactly 3, not 4 (float care)
    ["1%", 10, 1, "percent"],
    ["100%", 7, 7, "percent"],
    ["33.3%", 10, 4, "percent"],
  ];
  for (const [text, hosts, size, kind] of ok)
    test(`${text} of ${hosts} hosts: ${size}`, () => {
      const b = parseBatch(text, hosts);
      assert.equal(b.size, size);
      assert.equal(b.spec.kind, kind);
    });
  const bad: [string, string][] = [
    [
      "0",
      "--batch: a batch of 0 hosts would never patch anything; give at least 1 (or a share above 0%)",
    ],
    [
      "0%",
      "--batch: a batch of 0 hosts would never patch anything; give at least 1 (or a share above 0%)",
    ],
    ["150%", "--batch: 150% is over 100% of the hosts"],
    ["-1", '--batch: "-1" is neither a number of hosts (5) nor a share (10%)'],
    ["ten", '--batch: "ten" is neither a number of hosts (5) nor a share (10%)'],
    ["", '--batch: "" is neither a number of hosts (5) nor a share (10%)'],
  ];
  for (const [text, message] of bad)
    test(`"${text}" is refused`, () =>
      assert.equal(catchQuiesce(() => parseBatch(text, 50)).message, message));
});

describe("--max-failures: over the whole wave, never over 100%", () => {
  const ok: [string, number, number][] = [
    ["0", 50, 0],
    ["3", 50, 3],
    ["50", 50, 50],
    ["10%", 50, 5],
    ["10%", 15, 1], // rounded down
    ["0%", 50, 0],
    ["100%", 50, 50],
    ["5%", 10, 0],
  ];
  for (const [text, hosts, max] of ok)
    test(`${text} of ${hosts} hosts: ${max}`, () =>
      assert.equal(parseFailureBudget(text, hosts).max, max));
  const bad: [string, string][] = [
    ["101%", "--max-failures: 101% is over 100% of the hosts"],
    ["51", "--max-failures: 51 failures is more than the 50 host(s) of the wave (over 100%)"],
    ["x", '--max-failures: "x" is neither a number of hosts (5) nor a share (10%)'],
  ];
  for (const [text, message] of bad)
    test(`"${text}" is refused`, () =>
      assert.equal(catchQuiesce(() => parseFailureBudget(text, 50)).message, message));
});

describe("names", () => {
  test("wave names", () => {
    assert.equal(validateWaveName("patch-2024.06_a"), "patch-2024.06_a");
    for (const bad of ["", "a b", "-x", "x:y", "w".repeat(41)])
      assert.equal(catchQuiesce(() => validateWaveName(bad)).code, "INVALID_INPUT");
  });
  test("derived names: the issue's idempotency key", () => {
    assert.equal(patchKey("w1", "db-7"), "wave:w1:host:db-7:patch");
    assert.equal(hostRunId("w1", "db-7"), "wave:w1:db-7");
  });
  test("positive integers", () => {
    assert.equal(parsePositiveInt("4", "--concurrency"), 4);
    for (const bad of ["0", "-1", "1.5", "x", ""])
      assert.equal(
        catchQuiesce(() => parsePositiveInt(bad, "--concurrency")).message,
        `--concurrency: "${bad}" is not a positive whole number`,
      );
  });
});
