import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { EventKind, type EventInput } from "../../../src/domain/event.js";
import { EventOutbox, spoolPathFor } from "../../../src/lease/event-outbox.js";
import { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";

const dir = mkdtempSync(join(tmpdir(), "quiesce-outbox-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const lost = (scope: string): EventInput => ({
  kind: EventKind.LeaseLost,
  scope,
  token: 7,
  runId: "r-1",
  host: "db-7",
  pid: 4121,
  message: "holder gave the lease up as lost: the store was unreachable",
  detail: { at: "2026-12-01T21:55:30.962Z" },
});

/** A store with an outbox spooling in `spoolDir` (QUIESCE_OUTBOX_DIR, as the CLI reads it). */
async function withSpoolDir(spoolDir: string, fn: () => Promise<void>): Promise<void> {
  const before = process.env.QUIESCE_OUTBOX_DIR;
  process.env.QUIESCE_OUTBOX_DIR = spoolDir;
  try {
    await fn();
  } finally {
    if (before === undefined) delete process.env.QUIESCE_OUTBOX_DIR;
    else process.env.QUIESCE_OUTBOX_DIR = before;
  }
}

describe("EventOutbox: loss events the store could not take reach it through the spool", () => {
  test("what one process spooled, the next writes to the store, once, and the spool is gone", async () => {
    const spoolDir = join(dir, "a");
    const store = new SqliteStore(join(dir, "a.db"));
    try {
      await withSpoolDir(spoolDir, async () => {
        // The holder cannot write its loss (the store refuses), and exits: the event is spooled.
        const away = {
          ...store,
          location: store.location,
          events: { ...store.events, record: () => Promise.reject(new Error("store away")) },
        } as unknown as SqliteStore;
        const first = new EventOutbox(away);
        await first.deliver(lost("host:db-7"));
        assert.equal(first.size, 1, "kept in memory while the store is away");
        first.close();
        const file = spoolPathFor(store);
        assert.ok(existsSync(file), "the loss is spooled on disk");

        const next = new EventOutbox(store);
        assert.equal(await next.replaySpool(), 1);
        assert.equal(await next.replaySpool(), 0, "a spool is replayed once");
        assert.deepEqual(readdirSync(spoolDir), [], "the spool file is removed after the replay");
        const events = await store.events.list({ scope: "host:db-7" });
        assert.equal(events.length, 1);
        assert.equal(events[0]!.kind, EventKind.LeaseLost);
        assert.deepEqual(events[0]!.detail, { at: "2026-12-01T21:55:30.962Z" });
      });
    } finally {
      await store.close();
    }
  });

  test("another store's spool in the same directory is left alone; an empty or missing directory replays nothing", async () => {
    const spoolDir = join(dir, "b");
    mkdirSync(spoolDir);
    const store = new SqliteStore(join(dir, "b.db"));
    try {
      await withSpoolDir(spoolDir, async () => {
        assert.equal(await new EventOutbox(store).replaySpool(), 0, "empty directory");
        const other = join(spoolDir, "0123456789abcdef.jsonl");
        writeFileSync(other, `${JSON.stringify(lost("host:elsewhere"))}\n`);
        assert.equal(await new EventOutbox(store).replaySpool(), 0);
        assert.ok(existsSync(other), "another store's spool stays for that store");
        assert.equal((await store.events.list({ scope: "host:elsewhere" })).length, 0);
      });
      await withSpoolDir(join(dir, "missing"), async () => {
        assert.equal(await new EventOutbox(store).replaySpool(), 0, "no directory");
      });
    } finally {
      await store.close();
    }
  });
});
