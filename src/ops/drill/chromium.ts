import { accessSync, constants } from "node:fs";
import { invalidInput } from "../../domain/errors.js";

/** Where a system chromium is looked for: QUIESCE_CHROMIUM alone when set, else Debian's and Ubuntu's paths. */
export function chromiumCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  return env.QUIESCE_CHROMIUM
    ? [env.QUIESCE_CHROMIUM]
    : ["/usr/bin/chromium", "/usr/bin/chromium-browser"];
}

/** The system chromium the browser drill drives (never a downloaded one), or a usage error. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string {
  for (const p of chromiumCandidates(env)) {
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not this one
    }
  }
  throw invalidInput(
    `the browser drill needs chromium and found none (looked at ${chromiumCandidates(env).join(", ")}): ` +
      "install it with `sudo apt-get install chromium` (Debian; chromium-browser on Ubuntu) or set QUIESCE_CHROMIUM to its path; quiesce never downloads a browser",
  );
}

/** Flags for a headless chromium that talks to nothing but the pages it is sent to. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-gpu",
];
