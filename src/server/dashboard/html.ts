/** Escapes text for HTML content and attribute values (always quoted with "). */
export function esc(value: string | number | boolean | null | undefined): string {
  return String(value ?? "")
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

/** A coarse age for people: 4s, 1m05s, 2h10m, 3d4h (the client's ticker uses the same). */
export function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  if (s < 86_400)
    return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
  return `${Math.floor(s / 86_400)}d${Math.floor((s % 86_400) / 3600)}h`;
}

/** "12s ago", ticking in the browser from the store-clock instant `at`. */
export function ago(at: number, now: number): string {
  return `<span class="t" data-ago="${at}">${age(now - at)} ago</span>`;
}

/** "in 20s" / "12s ago", ticking in the browser towards (and past) `at`. */
export function until(at: number, now: number): string {
  const text = at >= now ? `in ${age(at - now)}` : `${age(now - at)} ago`;
  return `<span class="t" data-until="${at}">${text}</span>`;
}

export function time(at: number): string {
  const d = new Date(at).toISOString();
  return `<time datetime="${d}" title="${d}">${d.slice(11, 19)} UTC</time>`;
}

/** An action form: inert without JavaScript (hidden), posted with the operator's token by the
 * client script. `done` is what the page says when it worked. */
export function actionForm(o: {
  key: string;
  post: string;
  label: string;
  done: string;
  fields: string;
  danger?: boolean;
}): string {
  return `<details class="action js-only" data-key="${esc(o.key)}"><summary>${esc(o.label)}</summary>
<form class="act" data-post="${esc(o.post)}" data-done="${esc(o.done)}">${o.fields}
<button type="submit"${o.danger ? ' class="danger"' : ""}>${esc(o.label.replace(/\u2026$/, ""))}</button><output></output></form></details>`;
}

export function input(name: string, label: string, attrs = ""): string {
  return `<label>${esc(label)} <input name="${esc(name)}" ${attrs}></label>`;
}
