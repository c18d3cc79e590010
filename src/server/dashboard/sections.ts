import { STATUS_NAMES } from "../../ops/check.js";
import type { WaveStatus } from "../../wave/wave-status.js";
import { actionForm, age, ago, esc, input, time, until } from "./html.js";
import type { DashboardSnapshot, ReviewItem } from "./snapshot.js";

/** The page's live parts, by element id: the server renders them for the page and for each
 * update the stream pushes, so the page reads the same with JavaScript on or off. */
export function renderSections(s: DashboardSnapshot): Record<string, string> {
  return {
    verdict: verdict(s),
    leases: leases(s),
    review: review(s),
    waves: waves(s),
    runtimes: runtimes(s),
    incidents: incidents(s),
  };
}

const STATUS_CLASS = ["ok", "warn", "crit", "unknown"] as const;

function verdict(s: DashboardSnapshot): string {
  const c = s.check;
  const name = STATUS_NAMES[c.status];
  const summary =
    c.findings.length === 0
      ? `${s.leases.total} lease(s) held, none stale`
      : `${c.findings.length} finding(s)`;
  // `check` judges leases and waves; runs in review are shown beside it, never hidden.
  const review =
    s.review.total > 0
      ? `<span class="badge crit">${s.review.total > s.review.items.length ? `${s.review.items.length}+` : s.review.total} run(s) need review</span>`
      : "";
  const items = c.findings
    .map((f) => `<li class="${f.severity === "critical" ? "crit" : "warn"}">${esc(f.message)}</li>`)
    .join("");
  return `<div class="verdict ${STATUS_CLASS[c.status]}"><span class="label">check</span><strong>${name}</strong> <span>${esc(summary)}</span>${review}
<span class="as-of">as of ${time(s.now)}</span></div>${items ? `<ul class="findings">${items}</ul>` : ""}`;
}

function leases(s: DashboardSnapshot): string {
  const { shown, total } = s.leases;
  if (total === 0) return `<h2>Leases</h2><p class="empty">No leases held.</p>`;
  const expired = shown.filter((l) => l.expired).length;
  const rows = shown
    .map((l) => {
      const exp = l.expiresAt === null ? null : Date.parse(l.expiresAt);
      const o = l.owner;
      const takeover = l.takeover
        ? `<div class="sub">took over token ${l.takeover.previous.token} from ${esc(l.takeover.previous.owner.host)}: ${esc(l.takeover.summary)}</div>`
        : "";
      return `<tr class="lease${l.expired ? " expired" : ""}" data-scope="${esc(l.scope)}" data-expires="${exp ?? ""}">
<td><strong>${esc(l.scope)}</strong>${o.note ? `<div class="sub">${esc(o.note)}</div>` : ""}${takeover}</td>
<td data-label="holder">${o.system === "quiesce" ? "" : `${esc(o.system)}: `}${shortId(o.runId)}</td>
<td data-label="host">${esc(o.host)}${o.pid !== null ? ` <span class="sub">pid ${o.pid}</span>` : ""}</td>
<td class="num" data-label="token">${l.token}</td>
<td data-label="heartbeat">${ago(Date.parse(l.heartbeatAt), s.now)}</td>
<td data-label="expires">${exp === null ? "never" : until(exp, s.now)}</td>
<td class="state"><span class="badge ${l.expired ? "crit" : "ok"}">${l.expired ? "EXPIRED" : "live"}</span></td>
<td>${actionForm({
        key: `break:${l.scope}`,
        post: `/api/leases/${encodeURIComponent(l.scope)}/break`,
        label: "Break…",
        done: `Broke ${l.scope}; the incident is recorded.`,
        danger: true,
        fields:
          input("reason", "Reason", 'required maxlength="2000" placeholder="what you checked"') +
          `<label><input type="checkbox" name="force" value="true"> death unknown: break anyway</label>`,
      })}</td></tr>`;
    })
    .join("");
  const more =
    total > shown.length ? `<p class="sub">${total - shown.length} more: GET /api/leases</p>` : "";
  return `<h2>Leases <span class="count">${total} held${expired ? `, <span class="crit-text">${expired} expired</span>` : ""}</span></h2>
<div class="wrap"><table><thead><tr><th>Scope</th><th>Holder (run)</th><th>Host</th><th>Token</th><th>Heartbeat</th><th>Expires</th><th>State</th><th></th></tr></thead>
<tbody>${rows}</tbody></table></div>${more}`;
}

function review(s: DashboardSnapshot): string {
  const { items, total } = s.review;
  if (total === 0) return `<h2>Needs review</h2><p class="empty">Nothing waits for a person.</p>`;
  return `<h2>Needs review <span class="count crit-text">${total > items.length ? `${items.length}+` : total} run(s)</span></h2>
<p class="hint">Nobody can tell whether these side effects happened. Check the target system, then record what you found.</p>
${items.map((i) => reviewCard(i, s.now)).join("")}`;
}

function reviewCard(i: ReviewItem, now: number): string {
  const title = i.waveHost
    ? `wave ${esc(i.waveHost.wave)}, host <strong>${esc(i.waveHost.host)}</strong>`
    : `runtime ${esc(i.runtimeId)}`;
  const effects = i.effects
    .map(
      (
        e,
      ) => `<li><code>${esc(e.key)}</code> ${esc(e.state)}, attempt ${e.attempt}${e.requestId ? `, request ${esc(e.requestId)}` : ", no request id"}
${e.reason && !(i.reason ?? "").includes(e.reason) ? `<div class="evidence">${esc(e.reason)}</div>` : ""}${e.problem ? `<div class="evidence">record invalid: ${esc(e.problem)}</div>` : ""}</li>`,
    )
    .join("");
  const keys = i.effects.map((e) => `<option>${esc(e.key)}</option>`).join("");
  return `<article class="card review" data-run="${esc(i.runId)}"><h3>${title} <span class="sub">run ${esc(i.runId)}, ${ago(i.updatedAt, now)}</span></h3>
${i.reason ? `<p>${esc(i.reason)}</p>` : ""}<ul class="effects">${effects}</ul>
${actionForm({
  key: `resolve:${i.runId}`,
  post: `/api/runs/${encodeURIComponent(i.runId)}/resolve`,
  label: "Resolve…",
  done: `Resolved; run ${i.runId} can continue.`,
  fields:
    `<label>Effect <select name="effect">${keys}</select></label>` +
    `<label>It <select name="as"><option value="observed">happened (observed)</option><option value="not-sent">did not happen (send again)</option></select></label>` +
    input("reason", "What you checked", 'required maxlength="2000"'),
})}</article>`;
}

function waves(s: DashboardSnapshot): string {
  const { shown, total } = s.waves;
  if (total === 0) return `<h2>Waves</h2><p class="empty">No waves.</p>`;
  return `<h2>Waves <span class="count">${total}</span></h2>${shown.map((w) => waveCard(w, s.now)).join("")}`;
}

function waveCard(w: WaveStatus, now: number): string {
  const n = w.wave.hosts || 1;
  const seg = (state: string, count: number) =>
    count > 0
      ? `<span class="seg ${state}" style="width:${((count / n) * 100).toFixed(2)}%" title="${count} ${state}"></span>`
      : "";
  const c = w.counts;
  const bar = `<div class="bar" role="img" aria-label="${c.succeeded} of ${w.wave.hosts} hosts succeeded">${seg("succeeded", c.succeeded)}${seg("failed", c.failed)}${seg("needs_review", c.needs_review)}${seg("running", c.running)}${seg("unfinished", c.unfinished)}${seg("skipped", c.skipped)}</div>`;
  const counts = Object.entries(c)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `<span class="chip ${k}">${v} ${k.replace("_", " ")}</span>`)
    .join(" ");
  const h = w.holder;
  const holder = h
    ? `${h.state === "live" ? "held" : '<span class="crit-text">EXPIRED lease</span>'} by run ${shortId(h.runId)} on ${esc(h.host)}, heartbeat ${ago(now - h.heartbeatAgeMs, now)}`
    : "no agent";
  const running = w.wave.state === "running" && h?.state === "live";
  const stopAsked = w.agent?.stopRequested != null || w.agent?.state === "DRAINING";
  const stop =
    running && !stopAsked
      ? actionForm({
          key: `stop:${w.wave.name}`,
          post: `/api/waves/${encodeURIComponent(w.wave.name)}/stop`,
          label: "Stop wave…",
          done: `Stop requested: the agent starts no new host; hosts in flight finish.`,
          danger: true,
          fields: `<span class="sub">Hosts in flight finish; no new host starts.</span>`,
        })
      : "";
  const stopping =
    w.agent?.stopRequested && w.wave.state === "running"
      ? ` <span class="badge warn">stop requested</span>`
      : w.agent?.state === "DRAINING" && w.wave.state === "running"
        ? ` <span class="badge warn">stopping: hosts in flight finish</span>`
        : "";
  return `<article class="card wave" data-wave="${esc(w.wave.name)}"><h3>${esc(w.wave.name)} <span class="badge ${waveClass(w.wave.state)}">${esc(w.wave.state)}</span>${stopping}</h3>
${w.wave.reason ? `<p class="sub">${esc(w.wave.reason)}</p>` : ""}${bar}
<p>${c.succeeded + c.failed}/${w.wave.hosts} done · ${counts}</p>
<p class="sub">failures ${w.budget.failed} of at most ${w.budget.maxFailures}${w.budget.spent ? ' <span class="crit-text">budget spent</span>' : ""} · ${holder}${w.eta ? ` · ETA ${w.eta.at ? time(Date.parse(w.eta.at)) : "?"} (in ${age(w.eta.inMs)})` : ""}</p>${stop}</article>`;
}

function waveClass(state: string): string {
  return state === "running"
    ? "info"
    : state === "completed"
      ? "ok"
      : state === "halted"
        ? "crit"
        : "warn";
}

function runtimes(s: DashboardSnapshot): string {
  if (s.runtimes.length === 0) return `<h2>Runtimes</h2><p class="empty">No runtimes.</p>`;
  const rows = s.runtimes
    .map((r) => {
      const drain =
        r.state === "RUNNING" && r.lease.state === "live"
          ? actionForm({
              key: `drain:${r.runtimeId}`,
              post: "/api/maintenance",
              label: "Drain…",
              done: `Drain requested for ${r.runtimeId}.`,
              fields:
                `<input type="hidden" name="runtime" value="${esc(r.runtimeId)}">` +
                input(
                  "id",
                  "Maintenance id",
                  'required pattern="[A-Za-z0-9._:-]+" placeholder="mw-2024-06-01"',
                ),
            })
          : "";
      return `<tr><td><strong>${esc(r.runtimeId)}</strong></td><td><span class="badge ${runtimeClass(r.state)}">${esc(r.state)}</span>${r.pendingRequest ? ` <span class="sub">asked to drain by ${esc(r.pendingRequest.by)}</span>` : ""}</td>
<td data-label="maintenance">${esc(r.maintenanceId ?? "-")}</td><td class="num" data-label="active runs">${r.activeRuns}</td><td class="num" data-label="in review">${r.runsNeedingReview}</td>
<td data-label="process">${esc(r.process.host ?? "?")} <span class="sub">pid ${esc(r.process.pid ?? "?")}</span></td><td data-label="lease">${esc(r.lease.state)}</td><td>${drain}</td></tr>`;
    })
    .join("");
  return `<h2>Runtimes <span class="count">${s.runtimes.length}</span></h2><div class="wrap"><table><thead><tr><th>Runtime</th><th>State</th><th>Maintenance</th><th>Active runs</th><th>In review</th><th>Process</th><th>Lease</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function runtimeClass(state: string): string {
  return state === "RUNNING"
    ? "ok"
    : state === "NEEDS_REVIEW"
      ? "crit"
      : state === "STOPPED"
        ? "muted"
        : "warn";
}

const KIND_TEXT: Record<string, [string, string]> = {
  "lease.taken_over": ["takeover", "warn"],
  "lease.takeover_refused": ["refused", "crit"],
  "lease.broken": ["broken", "crit"],
};

function incidents(s: DashboardSnapshot): string {
  if (s.incidents.length === 0)
    return `<h2>Takeovers, refusals, breaks</h2><p class="empty">None recorded.</p>`;
  const rows = [...s.incidents]
    .reverse()
    .map((e) => {
      const [label, cls] = KIND_TEXT[e.kind] ?? [e.kind, "muted"];
      return `<li><span class="badge ${cls}">${label}</span> ${ago(e.at, s.now)} <strong>${esc(e.scope ?? "")}</strong> ${esc(e.message)}</li>`;
    })
    .join("");
  return `<h2>Takeovers, refusals, breaks <span class="count">latest ${s.incidents.length}</span></h2><ul class="events">${rows}</ul>`;
}

/**
 * Run ids are long UUIDs: on a screen the last 8 digits tell them apart (they are random; the
 * first ones are the time the run began, the same for runs that began together); the title
 * has all.
 */
function shortId(id: string): string {
  const m = /^r-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}([0-9a-f]{8})$/.exec(id);
  return m ? `<span title="${esc(id)}">r-…${m[1]}</span>` : esc(id);
}
