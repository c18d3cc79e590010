/**
 * quiesce/playwright: a browser side effect (a form submit) as a journal effect, recorded with
 * the context a reviewer needs: the page URL, who is logged in, a hash of the form's state, the
 * action and the request id the site answered with.
 *
 *     const checkout = browserCheckpoint(page, { identity: () => "alice@example.com" });
 *     const rt = await openRuntime({ id: "shopper", providers: [checkout.quiesceProvider] });
 *     const order = await withRun(run, () =>
 *       checkout.submit("order:cart-17:place", {
 *         action: "place order",
 *         perform: () => page.click("#place-order"),
 *         response: (r) => r.request().method() === "POST",
 *       }));
 *
 * A reload is never proof that a form was not submitted: a submit whose answer was not
 * recorded goes to review with its context (unless `lookup` can tell), and is never clicked
 * again by recovery. Types only from playwright-core.
 */
import { createHash } from "node:crypto";
import type { Page, Response } from "playwright-core";
import { checkKey } from "../domain/canonical-json.js";
import { invalidInput } from "../domain/errors.js";
import { CallProvider, callOnce } from "../journal/call-effect.js";
import { resolveRun, type RunBinding } from "../journal/current-run.js";
import type { LookupAnswer, Provider } from "../journal/provider.js";

export { withRun, currentRun } from "../journal/current-run.js";

export interface BrowserCheckpointOptions {
  /** The provider's name in the journal (default "browser"). */
  name?: string;
  /** Who is logged in (an email, an account id): recorded with every submit. */
  identity?: (page: Page) => string | null | Promise<string | null>;
  /** The element whose state is hashed (default: the main form, else the first form, else body). */
  selector?: string;
  /** What became of a key on the site (e.g. an order search by the key); recovery relies on it. */
  lookup?: (key: string, signal: AbortSignal) => Promise<LookupAnswer>;
  /** Response headers that carry the site's request id (default request-id, x-request-id). */
  requestIdHeaders?: readonly string[];
  /** How long to wait for the answer to a submit (default 30 s; then its fate is unknown). */
  timeoutMs?: number;
  run?: RunBinding;
}

export interface SubmitOptions {
  /** What the submit does, in words: the "last submitted action" a reviewer reads. */
  action: string;
  /** Performs it (fill the key into a hidden field, click the button); given the key. */
  perform: (key: string) => Promise<unknown>;
  /** Which response answers the submit (default: the next POST the page makes). */
  response?: (r: Response) => boolean;
}

/** The recorded outcome of a submit. */
export interface SubmitResult {
  url: string;
  status: number;
  requestId: string | null;
}

/** What is recorded with a submit before it is made (shown by `quiesce runs show`). */
export interface BrowserContext {
  url: string;
  identity: string | null;
  selector: string;
  stateHash: string;
  lastAction: string;
}

export interface BrowserCheckpoint {
  readonly quiesceProvider: Provider;
  /** The context as it is now (what `submit` records). */
  context(action: string): Promise<BrowserContext>;
  /** Submits once per run under `key`; a replay returns the recorded result without clicking. */
  submit(key: string, o: SubmitOptions): Promise<SubmitResult>;
}

const MAIN_FORM = "main form, form";

export function browserCheckpoint(page: Page, o: BrowserCheckpointOptions = {}): BrowserCheckpoint {
  assertOpen(page, "browserCheckpoint");
  const ids = o.requestIdHeaders ?? ["request-id", "x-request-id"];
  // A click cannot be rebuilt from JSON: recovery never re-sends (no `resend`); the run's code does.
  const provider = new CallProvider({
    name: o.name ?? "browser",
    ...(o.lookup ? { lookup: o.lookup } : {}),
  });
  const context = async (action: string): Promise<BrowserContext> => {
    const selector = o.selector ?? MAIN_FORM;
    const el = page.locator(selector).first();
    const state = (await el.count()) > 0 ? await el.evaluate(describeElement) : "";
    return {
      url: page.url(),
      identity: o.identity ? await o.identity(page) : null,
      selector,
      stateHash: `sha256:${createHash("sha256").update(state).digest("hex").slice(0, 16)}`,
      lastAction: action,
    };
  };
  return {
    quiesceProvider: provider,
    context,
    async submit(key, s) {
      const k = checkKey(key, "submit");
      if (typeof s?.action !== "string" || typeof s.perform !== "function")
        throw invalidInput("submit: options need action (a sentence) and perform (a function)");
      assertOpen(page, `submit ${k}`);
      const run = resolveRun(o.run, `submit ${k}`);
      const ctx = await context(s.action);
      return callOnce<SubmitResult>(run, {
        key: k,
        provider,
        request: { action: s.action, url: ctx.url },
        context: ctx,
        send: async () => {
          assertOpen(page, `submit ${k}`);
          const match = s.response ?? ((r: Response) => r.request().method() === "POST");
          const [res] = await Promise.all([
            page.waitForResponse(match, { timeout: o.timeoutMs ?? 30_000 }),
            s.perform(k),
          ]);
          const headers = res.headers();
          const requestId = ids.map((h) => headers[h]).find((v) => v) ?? null;
          const result: SubmitResult = { url: res.url(), status: res.status(), requestId };
          return { requestId, result };
        },
      });
    },
  };
}

function assertOpen(page: Page, what: string): void {
  if (typeof page?.isClosed !== "function")
    throw invalidInput(`${what}: that is not a Playwright page`);
  if (page.isClosed()) throw invalidInput(`${what}: the page is closed; nothing was journaled`);
}

/**
 * The element's markup and, for a form, the values typed into it (not in the markup). It runs
 * in the page: no DOM types here, hence the structural ones.
 */
function describeElement(el: { tagName: string; outerHTML: string }): string {
  if (el.tagName !== "FORM") return el.outerHTML;
  const Data = (
    globalThis as unknown as { FormData: new (f: unknown) => Iterable<[string, unknown]> }
  ).FormData;
  const values = [...new Data(el)].map(([k, v]) => [k, typeof v === "string" ? v : "(file)"]);
  return JSON.stringify(values) + el.outerHTML;
}
