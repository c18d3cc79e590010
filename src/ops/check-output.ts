import { CheckStatus, STATUS_NAMES, type CheckReport } from "./check.js";

/** The first line's text after `QUIESCE STATUS - `: the worst finding, or what was seen. */
export function checkSummary(r: CheckReport): string {
  const worst = r.findings[0];
  if (!worst) {
    const held = r.metrics.find((m) => m.perf === "leases")?.value ?? 0;
    return `${held} lease(s) held; nothing blocks maintenance or waits for a human`;
  }
  const more = r.findings.length - 1;
  return more > 0 ? `${worst.message} (and ${more} more)` : worst.message;
}

/** Monitoring-plugin style: status line with perfdata, then one line per finding, worst first. */
export function checkText(r: CheckReport): string {
  const perf = r.metrics
    .filter((m) => m.perf !== "")
    .map((m) => `${m.perf}=${m.value}`)
    .join(" ");
  const lines = [`QUIESCE ${STATUS_NAMES[r.status]} - ${checkSummary(r)} | ${perf}`];
  for (const f of r.findings) lines.push(`${f.severity.toUpperCase()}: ${f.message}`);
  return lines.join("\n") + "\n";
}

/** The same findings as the text, for scripts: ISO timestamps, durations in ms. */
export function checkJson(r: CheckReport) {
  return {
    status: r.status,
    statusName: STATUS_NAMES[r.status],
    summary: checkSummary(r),
    checkedAt: new Date(r.checkedAt).toISOString(),
    maxHoldMs: r.options.maxHoldMs,
    windowMs: r.options.windowMs,
    findings: r.findings,
    counts: Object.fromEntries(
      r.metrics.filter((m) => m.perf !== "").map((m) => [m.perf, m.value]),
    ),
  };
}

/** Prometheus text exposition (for node_exporter's textfile collector or a push). */
export async function checkPrometheus(r: CheckReport): Promise<string> {
  const { Gauge, Registry } = await import("prom-client"); // loaded only for this format
  const registry = new Registry();
  const g = (name: string, help: string, labelNames: string[] = []) =>
    new Gauge({ name: `quiesce_${name}`, help, labelNames, registers: [registry] });
  g("check_status", "0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN").set(r.status);
  const findings = g(
    "check_finding",
    "One per finding of the check (1), worst first in the text output",
    ["severity", "code", "subject"],
  );
  for (const f of r.findings)
    findings.set({ severity: f.severity, code: f.code, subject: f.subject }, 1);
  for (const m of r.metrics) {
    if (!m.series) {
      g(m.prom, m.help).set(m.value);
      continue;
    }
    const labelNames = Object.keys(m.series[0]?.labels ?? {});
    const gauge = g(m.prom, m.help, labelNames.length > 0 ? labelNames : ["scope", "system"]);
    for (const s of m.series) gauge.set(s.labels, s.value);
  }
  const text = await registry.metrics();
  return text.endsWith("\n") ? text : `${text}\n`;
}

/** What the check prints when it cannot tell: the store could not be read, or bad arguments. */
export function checkUnknown(format: string, message: string): string {
  if (format === "json")
    return (
      JSON.stringify(
        { status: CheckStatus.UNKNOWN, statusName: "UNKNOWN", summary: message, error: message },
        null,
        2,
      ) + "\n"
    );
  if (format === "prometheus")
    return `# ${message.replace(/\n/g, " ")}\n# HELP quiesce_check_status 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN\n# TYPE quiesce_check_status gauge\nquiesce_check_status 3\n`;
  return `QUIESCE UNKNOWN - ${message}\n`;
}
