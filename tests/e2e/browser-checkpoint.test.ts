import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { chromium } from "playwright-core";
import { browserCheckpoint, withRun } from "../../src/agents/playwright.js";
import { isQuiesceError } from "../../src/domain/errors.js";
import { Journal } from "../../src/journal/journal.js";
import { CHROMIUM_ARGS } from "../../src/ops/drill/chromium.js";
import { cli } from "../support/cli.js";
import { tempStore } from "../unit/journal/fixtures.js";

const CHROMIUM = process.env.QUIESCE_CHROMIUM ?? "/usr/bin/chromium";

test("browserCheckpoint: an unanswered submit goes to review with its context (runs show prints it); a closed page is refused, nothing journaled", async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`no chromium at ${CHROMIUM} (apt-get install chromium)`);
    return;
  }
  let posts = 0;
  const shop = http.createServer((req, res) => {
    if (req.method === "POST") return void posts++; // taken, never answered
    res.writeHead(200, { "content-type": "text/html", "set-cookie": "user=alice" });
    res.end(
      `<main><form method="post"><input name="item" value="book"><button>Buy</button></form></main>`,
    );
  });
  await new Promise<void>((r) => shop.listen(0, "127.0.0.1", r));
  const profile = mkdtempSync(join(tmpdir(), "quiesce-test-chromium-"));
  const env = tempStore();
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  t.after(async () => {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
    shop.closeAllConnections();
    shop.close();
    await env.cleanup();
  });
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${(shop.address() as AddressInfo).port}/checkout`);
  await page.fill("input[name=item]", "two books");
  const checkout = browserCheckpoint(page, {
    identity: async () =>
      (await page.context().cookies()).find((c) => c.name === "user")?.value ?? null,
    timeoutMs: 1500,
  });
  const lease = await env.leases.acquire("runtime:rt", { ttl: "10s" });
  const j = new Journal(env.store, lease, {
    runtimeId: "rt",
    providers: [checkout.quiesceProvider],
  });
  const run = await j.createRun({ runId: "b1" });
  await assert.rejects(
    withRun(run, () =>
      checkout.submit("order:alice:book", {
        action: "buy the book",
        perform: () => page.click("button"),
      }),
    ),
    (e) => isQuiesceError(e, "NEEDS_REVIEW"),
  );
  assert.equal(posts, 1);
  const e = (await env.store.journal.getRun("b1"))!.effects[0]!;
  assert.equal(e.state, "NEEDS_REVIEW", "no answer is not proof it was not placed");
  const ctx = JSON.parse(e.context!) as Record<string, string>;
  assert.equal(ctx.identity, "alice");
  assert.equal(ctx.lastAction, "buy the book");
  assert.match(ctx.url!, /^http:\/\/127\.0\.0\.1:\d+\/checkout$/);
  assert.match(ctx.stateHash!, /^sha256:[0-9a-f]{16}$/);
  const show = await cli(["runs", "show", "b1", "--store", env.path]);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /^context of order:alice:book:$/m);
  assert.match(show.stdout, /^ {2}identity +alice$/m);
  assert.match(show.stdout, /^ {2}lastAction +buy the book$/m);
  assert.match(show.stdout, /^ {2}stateHash +sha256:[0-9a-f]{16}$/m);

  const run2 = await j.createRun({ runId: "b2" });
  await page.close();
  await assert.rejects(
    withRun(run2, () =>
      checkout.submit("order:alice:pen", {
        action: "buy a pen",
        perform: () => page.click("button"),
      }),
    ),
    /^QuiesceError: submit order:alice:pen: the page is closed; nothing was journaled$/,
  );
  assert.throws(() => browserCheckpoint(page), /browserCheckpoint: the page is closed/);
  assert.equal((await env.store.journal.getRun("b2"))!.effects.length, 0);
});
