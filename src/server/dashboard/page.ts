import { esc } from "./html.js";

export interface PageInput {
  /** Section id -> rendered HTML (renderSections), or null when the store could not be read. */
  sections: Record<string, string> | null;
  /** Why the store could not be read. */
  down: string | null;
  location: string;
  backend: string;
  /** The server takes operator actions (it was started with a token). */
  writable: boolean;
}

const ORDER: [string, string][] = [
  ["leases", "wide"],
  ["review", ""],
  ["waves", ""],
  ["runtimes", "wide"],
  ["incidents", "wide"],
];

/**
 * The whole page, server-rendered: with JavaScript off it is a complete read-only page that
 * reloads itself every 30 s; with JavaScript on, dashboard.js keeps it live over SSE and
 * posts operator actions with the token. Nothing is fetched from anywhere else.
 */
export function renderPage(p: PageInput): string {
  const s = p.sections;
  const body = ORDER.map(
    ([id, cls]) => `<section id="${id}" class="panel ${cls}">${s?.[id] ?? ""}</section>`,
  ).join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>quiesce</title>
<link rel="stylesheet" href="/assets/dashboard.css">
<noscript><meta http-equiv="refresh" content="30"></noscript>
<script type="module" src="/assets/dashboard.js"></script>
</head>
<body data-writable="${p.writable}">
<header><h1>quiesce</h1><span class="store">${esc(p.backend)} · ${esc(p.location)}</span>
<span id="live" class="live">static page, reloads every 30 s</span></header>
<div id="down" class="banner"${p.down === null ? " hidden" : ""}>The store is unreachable: <span>${esc(p.down ?? "")}</span>. What you see may be out of date; this page recovers by itself.</div>
<main>
<section id="verdict" class="panel wide">${s?.verdict ?? ""}</section>
<section id="operator" class="panel wide js-only">${operatorPanel(p.writable)}</section>
${body}
</main>
<footer>quiesce serve · JSON: <a href="/api/leases">/api/leases</a> · <a href="/api/check">/api/check</a> · <a href="/metrics">/metrics</a></footer>
</body></html>`;
}

function operatorPanel(writable: boolean): string {
  if (!writable)
    return `<p class="sub">Read-only: this server was started without --token-file, so it takes no operator actions.</p>`;
  return `<form id="operator-form" class="operator" autocomplete="off">
<label>Operator token <input type="password" id="op-token" placeholder="from the token file"></label>
<label>Your name <input id="op-name" maxlength="100" placeholder="recorded with each action"></label>
<span class="sub">Actions (break, resolve, stop, drain) are sent with this token and recorded under your name. The token stays in this tab.</span>
</form>`;
}
