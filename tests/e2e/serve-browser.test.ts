import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { openLeases, type Provider } from "../../src/index.js";
import { Journal } from "../../src/journal/journal.js";
import { sqliteBackend } from "../support/backends.js";
import { cli, startCli, waitFor } from "../support/cli.js";
import { events, withLocation } from "../support/e2e.js";
import { REPO } from "../support/paths.js";
import { startServe, TOKEN } from "../support/serve.js";
import { makeFleet, runArgs } from "./wave-helpers.js";

/**
 * The dashboard in a real browser: Debian's chromium driven by playwright-core (nothing is
 * downloaded). The page must show a lease held from the CLI without a reload, then its expiry
 * and its takeover; an operator resolves a needs_review run and stops a wave through it.
 * Screenshots go to tests/e2e/artifacts/ for a person to look at.
 */
const CHROMIUM = "/usr/bin/chromium";
const missing = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is not installed (Debian package chromium)`;
if (missing && process.env.CI === "true") throw new Error(`${missing} (CI=true)`);
const ARTIFACTS = join(REPO, "tests", "e2e", "artifacts");

const deadPid = () =>
  Number(spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim());

const lossy: Provider = {
  name: "mail",
  capabilities: { idempotencyKey: false, statusLookup: false },
  dispatch: () => Promise.reject(new Error("connection reset")),
};

async function seedReview(url: string): Promise<void> {
  await using leases = await openLeases({ store: url });
  const lease = await leases.acquire("runtime:billing", { ttl: "10s" });
  const j = new Journal(leases.store, lease, { runtimeId: "billing", providers: [lossy] });
  const run = await j.createRun({ runId: "invoice-run-42" });
  await run.effect({ key: "invoice:42:email", provider: "mail" }).catch(() => undefined);
}

function launch(): Promise<Browser> {
  // launch() runs on a fresh temporary profile, removed when the browser closes.
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-gpu",
    ],
  });
}

/** Every request the page makes must go to the server under test: no CDN, no fonts. */
async function loopbackOnly(page: Page, base: string, foreign: string[]): Promise<void> {
  await page.route("**/*", (route) => {
    const u = route.request().url();
    if (u.startsWith(base)) return route.continue();
    foreign.push(u);
    return route.abort();
  });
}

test(
  "the dashboard in chromium: a lease appears live, expires, is taken over; a run is resolved and a wave stopped through the page",
  { skip: missing },
  () =>
    withLocation(sqliteBackend, "serve-browser", async (url) => {
      mkdirSync(ARTIFACTS, { recursive: true });
      const s = ["--store", url];
      await seedReview(url);
      const fleet = makeFleet(4, { gated: ["h1"] });
      await cli(["wave", "create", "kernel-6.1", "--hosts", fleet.hostsFile, ...s]);
      const agent = startCli(runArgs(url, "kernel-6.1", fleet, ["--ttl", "10s"]));
      await waitFor("h1 to start", () => fleet.lines().includes("start h1"));
      const srv = await startServe(url);
      const browser = await launch();
      try {
        const ctx = await browser.newContext({ viewport: { width: 1360, height: 1000 } });
        const page = await ctx.newPage();
        const foreign: string[] = [];
        await loopbackOnly(page, srv.base, foreign);
        const errors: string[] = [];
        page.on("pageerror", (e) => errors.push(e.message));
        let navigations = 0;
        page.on("framenavigated", (f) => f === page.mainFrame() && navigations++);
        await page.goto(srv.base);
        await page.locator("#live", { hasText: "live" }).waitFor();
        assert.equal(navigations, 1);

        // A lease held from the CLI shows up without a reload.
        const dead = String(deadPid());
        await cli([
          "lock",
          "acquire",
          "host:db-1",
          "--ttl",
          "4s",
          "--owner-pid",
          dead,
          "--note",
          "kernel patch",
          ...s,
        ]);
        const row = page.locator('tr.lease[data-scope="host:db-1"]');
        await row.waitFor({ timeout: 15_000 });
        assert.match(await row.innerText(), /host:db-1[\s\S]*kernel patch[\s\S]*live/);
        await page.screenshot({ path: join(ARTIFACTS, "1-lease-live.png"), fullPage: true });

        // Its holder is gone: past the expiry the row turns EXPIRED and the verdict CRITICAL.
        await page.locator('tr.lease.expired[data-scope="host:db-1"]').waitFor({ timeout: 15_000 });
        await page.locator("#verdict .verdict.crit").waitFor({ timeout: 15_000 });
        await page.screenshot({ path: join(ARTIFACTS, "2-lease-expired.png"), fullPage: true });
        // The README's picture (docs/dashboard.png is a copy of this one).
        await page.setViewportSize({ width: 1100, height: 760 });
        await page.screenshot({ path: join(ARTIFACTS, "docs-dashboard.png") });
        await page.setViewportSize({ width: 1360, height: 1000 });

        // A takeover from the CLI: the new token and whom it replaced appear, and the takeover
        // is listed with the evidence.
        const take = await cli(["lock", "takeover", "host:db-1", "--hold", "--ttl", "10m", ...s]);
        assert.equal(take.code, 0, take.stderr);
        await page
          .locator('tr.lease[data-scope="host:db-1"]:not(.expired)', {
            hasText: "took over token 1",
          })
          .waitFor({ timeout: 15_000 });
        const incident = page.locator("#incidents li", { hasText: "host:db-1" }).first();
        await incident.waitFor();
        assert.match(await incident.innerText(), /takeover/);
        await page.screenshot({ path: join(ARTIFACTS, "3-takeover.png"), fullPage: true });

        // The operator signs in (token in this tab only) and resolves the run in review.
        await page.fill("#op-token", TOKEN);
        await page.fill("#op-name", "erin");
        await page.locator("#op-name").dispatchEvent("change");
        await page.locator("#op-token").dispatchEvent("change");
        const card = page.locator('article.review[data-run="invoice-run-42"]');
        assert.match(
          await card.innerText(),
          /invoice:42:email[\s\S]*DISPATCHED without an acknowledgement|invoice:42:email/,
        );
        await card.locator("summary", { hasText: "Resolve" }).click();
        await card.locator('select[name="as"]').selectOption("not-sent");
        await card.locator('input[name="reason"]').fill("no such mail in the provider's log");
        await page.screenshot({ path: join(ARTIFACTS, "4-resolve-form.png"), fullPage: true });
        await card.locator("button", { hasText: "Resolve" }).click();
        await page.locator("#toast.ok", { hasText: "Resolved" }).waitFor();
        await card.waitFor({ state: "detached", timeout: 15_000 });
        const resolved = (await events(url)).find((e) => e.kind === "journal.effect_resolved")!;
        assert.equal(resolved.detail.operator, "erin");
        const run = JSON.parse(
          (await cli(["runs", "show", "invoice-run-42", "--json", ...s])).stdout,
        ) as {
          run: { state: string };
        };
        assert.equal(run.run.state, "suspended");

        // ... and stops the wave.
        const wave = page.locator('article.wave[data-wave="kernel-6.1"]');
        await wave.locator("summary", { hasText: "Stop wave" }).click();
        await wave.locator("button", { hasText: "Stop wave" }).click();
        await page.locator("#toast.ok", { hasText: "Stop requested" }).waitFor();
        await wave
          .locator(".badge", { hasText: /stop requested|stopping/ })
          .waitFor({ timeout: 15_000 });
        await page.screenshot({ path: join(ARTIFACTS, "5-wave-stopping.png"), fullPage: true });
        fleet.open("h1");
        assert.equal((await agent.done).code, 0);
        await wave.locator(".badge", { hasText: "stopped" }).waitFor({ timeout: 15_000 });
        const stop = (await events(url)).find((e) => e.kind === "maintenance.requested")!;
        assert.equal(stop.detail.by, "erin");
        await page.screenshot({ path: join(ARTIFACTS, "6-after-actions.png"), fullPage: true });
        assert.equal(navigations, 1, "everything above happened without a reload");

        // A phone.
        await page.setViewportSize({ width: 390, height: 844 });
        await page.screenshot({ path: join(ARTIFACTS, "7-phone.png"), fullPage: true });

        // JavaScript off: the same page, server-rendered and read-only.
        const plain = await browser.newContext({
          javaScriptEnabled: false,
          viewport: { width: 1024, height: 800 },
        });
        const p2 = await plain.newPage();
        await loopbackOnly(p2, srv.base, foreign);
        await p2.goto(srv.base);
        assert.match(await p2.locator('tr.lease[data-scope="host:db-1"]').innerText(), /host:db-1/);
        assert.equal(
          await p2.locator("#operator").isVisible(),
          false,
          "no actions without JavaScript",
        );
        assert.match(await p2.locator("#live").innerText(), /static page/);
        await p2.screenshot({ path: join(ARTIFACTS, "8-no-javascript.png"), fullPage: true });

        assert.deepEqual(foreign, [], "the page fetched nothing from anywhere else");
        assert.deepEqual(errors, [], "no script errors");
      } finally {
        await browser.close();
        fleet.cleanup();
        agent.child.kill("SIGKILL");
        await srv.stop();
      }
    }),
);
