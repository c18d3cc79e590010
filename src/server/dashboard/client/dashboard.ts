/**
 * The dashboard's only script (no framework, nothing fetched from elsewhere). The server renders
 * every part of the page; this keeps it live: it swaps in the parts the stream pushes, ticks the
 * ages and expiries every second on the store's clock, shows when the store is down, and posts
 * operator actions with the token from the operator panel (sent in a header, never a cookie).
 */

interface Snapshot {
  now: number;
  sections: Record<string, string>;
}
interface HealthMessage {
  ok: boolean;
  error?: string;
}

document.documentElement.classList.add("js");

/** Store clock minus this browser's clock, from the last snapshot. */
let offset = 0;
const rendered = new Map<string, string>();

function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  if (s < 86_400)
    return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
  return `${Math.floor(s / 86_400)}d${Math.floor((s % 86_400) / 3600)}h`;
}

/** Ages and expiries move on between updates; a lease that passes its expiry turns red. */
function tick(): void {
  const now = Date.now() + offset;
  for (const el of document.querySelectorAll<HTMLElement>("[data-ago]"))
    el.textContent = `${age(now - Number(el.dataset.ago))} ago`;
  for (const el of document.querySelectorAll<HTMLElement>("[data-until]")) {
    const at = Number(el.dataset.until);
    el.textContent = at >= now ? `in ${age(at - now)}` : `${age(now - at)} ago`;
  }
  for (const row of document.querySelectorAll<HTMLElement>("tr.lease[data-expires]")) {
    const expired = Number(row.dataset.expires) < now;
    if (row.classList.contains("expired") === expired) continue;
    row.classList.toggle("expired", expired);
    const badge = row.querySelector(".state .badge");
    if (badge) {
      badge.textContent = expired ? "EXPIRED" : "live";
      badge.className = `badge ${expired ? "crit" : "ok"}`;
    }
  }
}

/** What the operator is in the middle of: open forms, typed values, focus. */
function saveState(root: HTMLElement) {
  const open = new Set<string>();
  const values = new Map<string, string | boolean>();
  for (const d of root.querySelectorAll<HTMLDetailsElement>("details[data-key]")) {
    if (!d.open) continue;
    const key = d.dataset.key!;
    open.add(key);
    for (const f of d.querySelectorAll<HTMLInputElement>("input[name], select[name]"))
      values.set(`${key}|${f.name}`, f.type === "checkbox" ? f.checked : f.value);
  }
  const active = document.activeElement as HTMLInputElement | null;
  const focusKey =
    active && root.contains(active) && active.name
      ? `${active.closest<HTMLElement>("details[data-key]")?.dataset.key}|${active.name}`
      : null;
  return { open, values, focusKey };
}

function restoreState(root: HTMLElement, s: ReturnType<typeof saveState>): void {
  for (const d of root.querySelectorAll<HTMLDetailsElement>("details[data-key]")) {
    const key = d.dataset.key!;
    if (!s.open.has(key)) continue;
    d.open = true;
    for (const f of d.querySelectorAll<HTMLInputElement>("input[name], select[name]")) {
      const v = s.values.get(`${key}|${f.name}`);
      if (typeof v === "boolean") f.checked = v;
      else if (v !== undefined) f.value = v;
      if (`${key}|${f.name}` === s.focusKey) f.focus();
    }
  }
}

function apply(snap: Snapshot): void {
  offset = snap.now - Date.now();
  for (const [id, html] of Object.entries(snap.sections)) {
    const el = document.getElementById(id);
    if (!el || rendered.get(id) === html) continue;
    const before = new Set(
      [...el.querySelectorAll<HTMLElement>("tr[data-scope]")].map((r) => r.dataset.scope),
    );
    const state = saveState(el);
    el.innerHTML = html;
    rendered.set(id, html);
    restoreState(el, state);
    // A lease that just appeared flashes once, so a change is seen without hunting for it.
    for (const r of el.querySelectorAll<HTMLElement>("tr[data-scope]"))
      if (!before.has(r.dataset.scope)) r.classList.add("fresh");
  }
  tick();
}

const live = document.getElementById("live");
const down = document.getElementById("down");

function setLive(text: string, on: boolean): void {
  if (!live) return;
  live.textContent = text;
  live.className = `live ${on ? "on" : "off"}`;
}

function health(h: HealthMessage): void {
  if (!down) return;
  down.hidden = h.ok;
  const detail = down.querySelector("span");
  if (detail && h.error) detail.textContent = h.error;
  setLive(h.ok ? "live" : "store unreachable", h.ok);
}

function connect(): void {
  const es = new EventSource("/dashboard/stream");
  es.addEventListener("snapshot", (m) =>
    apply(JSON.parse((m as MessageEvent<string>).data) as Snapshot),
  );
  es.addEventListener("health", (m) =>
    health(JSON.parse((m as MessageEvent<string>).data) as HealthMessage),
  );
  es.onopen = () => setLive("live", true);
  // EventSource reconnects by itself; say so meanwhile.
  es.onerror = () => setLive("reconnecting…", false);
}

// --- Operator actions: token in sessionStorage (this tab only), name in localStorage.
const tokenInput = document.getElementById("op-token") as HTMLInputElement | null;
const nameInput = document.getElementById("op-name") as HTMLInputElement | null;
if (tokenInput) {
  tokenInput.value = sessionStorage.getItem("quiesce-token") ?? "";
  tokenInput.addEventListener("change", () =>
    sessionStorage.setItem("quiesce-token", tokenInput.value.trim()),
  );
}
if (nameInput) {
  nameInput.value = localStorage.getItem("quiesce-operator") ?? "";
  nameInput.addEventListener("change", () =>
    localStorage.setItem("quiesce-operator", nameInput.value.trim()),
  );
}

const toast = document.createElement("div");
toast.id = "toast";
toast.setAttribute("role", "status");
toast.hidden = true;
document.body.append(toast);

let toastTimer: ReturnType<typeof setTimeout> | undefined;

function say(text: string, ok: boolean, out: HTMLOutputElement | null): void {
  toast.textContent = text;
  toast.className = ok ? "ok" : "err";
  toast.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (toast.hidden = true), ok ? 8000 : 15_000);
  if (out) {
    out.textContent = text;
    out.className = ok ? "ok" : "err";
  }
}

async function submit(form: HTMLFormElement): Promise<void> {
  const out = form.querySelector("output");
  const token = tokenInput?.value.trim() ?? "";
  const operator = nameInput?.value.trim() ?? "";
  if (!token) return say("Enter the operator token at the top of the page first.", false, out);
  if (!operator) return say("Enter your name at the top of the page first.", false, out);
  const body: Record<string, unknown> = { operator };
  for (const f of form.querySelectorAll<HTMLInputElement>("input[name], select[name]")) {
    if (f.type === "checkbox") {
      if (f.checked) body[f.name] = true;
    } else if (f.value !== "") body[f.name] = f.value;
  }
  const button = form.querySelector("button");
  if (button) button.disabled = true;
  try {
    const r = await fetch(form.dataset.post!, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = (await r.json().catch(() => ({}))) as { error?: string; outcome?: string };
    if (!r.ok) say(answer.error ?? `refused (HTTP ${r.status})`, false, out);
    else if (answer.outcome === "refused")
      say("Refused: the owner may be alive or its death is unproven (see the events).", false, out);
    else say(form.dataset.done ?? "Done.", true, out);
  } catch (e) {
    say(`The server did not answer: ${(e as Error).message}`, false, out);
  } finally {
    if (button) button.disabled = false;
  }
}

document.addEventListener("submit", (ev) => {
  const form = (ev.target as HTMLElement).closest<HTMLFormElement>("form.act, #operator-form");
  if (!form) return;
  ev.preventDefault();
  if (form.id !== "operator-form") void submit(form);
});

setInterval(tick, 1000);
connect();
