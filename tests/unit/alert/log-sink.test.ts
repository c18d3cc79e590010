import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createLogSink, formatAlertLine } from "../../../src/alert/log-sink.js";
import { sampleAlert } from "./fixtures.js";

describe("log sink", () => {
  test("one line: quiesce: ALERT [severity] kind scope: summary", () => {
    assert.equal(
      formatAlertLine(sampleAlert()),
      "quiesce: ALERT [critical] lease.taken_over host:db-7: took over host:db-7 from run r-1 on db-7: pid 4121 is gone",
    );
  });

  test("an alert without a scope leaves the scope out", () => {
    const line = formatAlertLine(
      sampleAlert({ kind: "alert.failed", severity: "warning", scope: null, summary: "x" }),
    );
    assert.equal(line, "quiesce: ALERT [warning] alert.failed: x");
  });

  test("a multi-line summary stays on one line", () => {
    const line = formatAlertLine(
      sampleAlert({ severity: "info", summary: "first\n  second\r\nthird" }),
    );
    assert.equal(line, "quiesce: ALERT [info] lease.taken_over host:db-7: first second third");
  });

  test("send writes the line, newline-terminated, before it returns", async () => {
    const lines: string[] = [];
    const sink = createLogSink((l) => lines.push(l));
    const sent = sink.send(sampleAlert(), new AbortController().signal);
    assert.deepEqual(lines, [`${formatAlertLine(sampleAlert())}\n`], "written synchronously");
    await sent;
    assert.equal(sink.name, "log");
  });

  test("a failing write is a rejected delivery, not an exception", async () => {
    const sink = createLogSink(() => {
      throw new Error("EPIPE: stderr is closed");
    });
    await assert.rejects(sink.send(sampleAlert(), new AbortController().signal), /EPIPE/);
  });
});
