// A browser agent (system chromium via playwright-core) that places an order once: the submit
// is journaled with the page's URL, the logged-in user, a hash of the form and the action.
//   node examples/browser-agent.mjs      (needs /usr/bin/chromium, or CHROMIUM=/path)
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { openRuntime } from "quiesce";
import { browserCheckpoint, withRun } from "quiesce/playwright";

let orders = 0; // the shop on 127.0.0.1 counts the orders it takes
const shop = http.createServer((req, res) => {
  if (req.method === "POST") {
    orders++;
    res.writeHead(200, { "content-type": "text/html", "x-request-id": `order-${orders}` });
    return res.end(`<p>Order ${orders} placed</p>`);
  }
  res.writeHead(200, { "content-type": "text/html", "set-cookie": "user=alice" });
  res.end(
    `<main><form method="post"><input name="item" value="book"><button>Buy</button></form></main>`,
  );
});
await new Promise((resolve) => shop.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${shop.address().port}/checkout`;

const profile = mkdtempSync(join(tmpdir(), "quiesce-example-chromium-"));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-gpu",
  ],
});
const page = await browser.newPage();
const checkout = browserCheckpoint(page, {
  name: "shop",
  identity: async () =>
    (await page.context().cookies()).find((c) => c.name === "user")?.value ?? null,
  requestIdHeaders: ["x-request-id"],
});

const store = process.env.QUIESCE_STORE ?? join(tmpdir(), "quiesce-examples.db");
const rt = await openRuntime({
  store,
  id: "example-browser",
  providers: [checkout.quiesceProvider],
});
const run = await rt.startRun();
for (const attempt of [1, 2]) {
  // The second pass is a retry after a reload: the journal answers, the button is not clicked.
  await page.goto(url);
  const order = await withRun(run, () =>
    checkout.submit("order:alice:book", {
      action: "buy the book",
      perform: () => page.click("button"),
    }),
  );
  console.log(`pass ${attempt}:`, JSON.stringify(order));
}
console.log("orders the shop took:", orders); // 1
console.log("recorded context:", run.effects[0].context);
await run.complete();
await rt.stop();
await browser.close();
rmSync(profile, { recursive: true, force: true });
shop.close();
