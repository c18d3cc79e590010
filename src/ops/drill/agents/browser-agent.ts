/**
 * `quiesce drill --agent browser`: the system chromium, driven by playwright-core, places an
 * order through the checkout form of the drill's shop on 127.0.0.1 (which counts orders); the
 * submit is a browser effect recorded with browserCheckpoint's context. A resumed run opens the
 * form again and submits it only if the journal proves it was never sent.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { browserCheckpoint, withRun } from "../../../agents/playwright.js";
import type { Run } from "../../../journal/run.js";
import { runDrillAgent } from "../agent-loop.js";
import { CHROMIUM_ARGS, findChromium } from "../chromium.js";
import { demoCapabilities, lookupEffect } from "../demo-client.js";
import { jobKey } from "../jobs.js";

runDrillAgent(async (shopUrl) => {
  const caps = await demoCapabilities(shopUrl);
  // Under the drill's own temporary directory: a SIGKILLed agent's profile is removed with it.
  const profile = mkdtempSync(join(process.env.QUIESCE_DRILL_TMP ?? tmpdir(), "chromium-"));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: findChromium(),
    headless: true,
    args: CHROMIUM_ARGS,
  });
  const page = await browser.newPage();
  const checkout = browserCheckpoint(page, {
    name: "shop",
    selector: "main form",
    identity: async () =>
      (await page.context().cookies()).find((c) => c.name === "user")?.value ?? null,
    ...(caps.statusLookup ? { lookup: (key: string) => lookupEffect(shopUrl, key) } : {}),
    requestIdHeaders: ["x-request-id"],
  });
  let queue: Promise<unknown> = Promise.resolve();
  return {
    providers: [checkout.quiesceProvider],
    // One page, one order at a time (a resumed job and a new one may come together).
    perform: (run, job) => {
      const next = queue.then(() => placeOrder(run, job));
      queue = next.catch(() => undefined);
      return next;
    },
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };

  async function placeOrder(run: Run, job: string): Promise<unknown> {
    await page.goto(`${shopUrl}/checkout?job=${job}`);
    return withRun(run, () =>
      checkout.submit(jobKey(job), {
        action: `place order for job ${job}`,
        perform: async (key) => {
          await page.fill("#key", key);
          await page.click("#place");
        },
        response: (r) => r.request().method() === "POST" && r.url().endsWith("/checkout"),
      }),
    );
  }
});
