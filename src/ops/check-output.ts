import { STATUS_NAMES, type CheckReport } from "./check.js";

/** Nagios/monitoring-plugin style: status line with perfdata, then one line per finding. */
export function checkText(r: CheckReport): string {
  const name = STATUS_NAMES[r.status];
  const first = r.findings[0];
  const summary =
    r.findings.length === 0
      ? `${r.leases.held} lease(s) held, none stale`
      : `${r.findings.length} finding(s): ${first!.message}`;
  const perf = `leases=${r.leases.held} expired=${r.leases.expired} no_expiry=${r.leases.noExpiry} held_too_long=${r.leases.heldTooLong} refused_takeovers=${r.refusedTakeovers} waves_halted=${r.waves.halted} wave_hosts_needing_review=${r.waves.hostsNeedingReview}`;
  const lines = [`QUIESCE ${name} - ${summary} | ${perf}`];
  for (const f of r.findings) lines.push(`${f.severity.toUpperCase()}: ${f.message}`);
  return lines.join("\n") + "\n";
}

/** Prometheus text exposition (for node_exporter's textfile collector or a push). */
export async function checkPrometheus(r: CheckReport): Promise<string> {
  const { Gauge, Registry } = await import("prom-client"); // loaded only for this format
  const registry = new Registry();
  const g = (name: string, help: string, labelNames: string[] = []) =>
    new Gauge({ name, help, labelNames, registers: [registry] });
  g("quiesce_check_status", "0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN").set(r.status);
  g("quiesce_leases_held", "Leases held, live or expired").set(r.leases.held);
  g("quiesce_leases_expired", "Leases past their expiry and not released").set(r.leases.expired);
  g("quiesce_leases_without_expiry", "Leases that can never expire").set(r.leases.noExpiry);
  g("quiesce_leases_held_too_long", "Leases held longer than --max-hold").set(r.leases.heldTooLong);
  g("quiesce_takeovers_refused", "Takeovers refused since the previous check").set(
    r.refusedTakeovers,
  );
  g("quiesce_waves_halted", "Waves halted until someone looks (budget, health gate, review)").set(
    r.waves.halted,
  );
  g("quiesce_wave_hosts_needs_review", "Wave hosts whose patch may or may not have landed").set(
    r.waves.hostsNeedingReview,
  );
  const held = g("quiesce_lease_held_seconds", "How long each lease has been held", [
    "scope",
    "system",
  ]);
  const expired = g(
    "quiesce_lease_expired_seconds",
    "How long ago each stale lease expired (0: live)",
    ["scope", "system"],
  );
  for (const d of r.detail) {
    held.set({ scope: d.scope, system: d.system }, d.heldMs / 1000);
    expired.set({ scope: d.scope, system: d.system }, d.expiredMs / 1000);
  }
  return registry.metrics();
}
