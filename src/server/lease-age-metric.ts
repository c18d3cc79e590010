import type { LeaseRecord } from "../domain/lease.js";

const NAME = "quiesce_lease_heartbeat_age_seconds";
const HELP = "Seconds since each held lease's last heartbeat";

/**
 * `quiesce_lease_heartbeat_age_seconds{scope,system}`, one series per held lease, in the text
 * prom-client writes for a Gauge (the unit test holds the two to the same bytes). Written here
 * rather than through a prom-client Gauge: with 10,000 leases its set() per series and its
 * exposition took 40-50 ms a scrape, the whole of /metrics' budget; this takes a few. The other
 * metrics stay in prom-client; these are few and bounded.
 */
export function leaseAgeMetric(leases: readonly LeaseRecord[], now: number): string {
  const lines = [`# HELP ${NAME} ${HELP}`, `# TYPE ${NAME} gauge`];
  for (const l of leases)
    lines.push(
      `${NAME}{scope="${labelValue(l.scope)}",system="${labelValue(l.owner.system)}"} ${value((now - l.heartbeatAt) / 1000)}`,
    );
  return lines.join("\n");
}

/** The exposition format's escapes, as prom-client applies them: backslash, newline, quote. */
function labelValue(s: string): string {
  return /[\\\n"]/.test(s)
    ? s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')
    : s;
}

function value(v: number): string {
  if (Number.isNaN(v)) return "Nan";
  if (!Number.isFinite(v)) return v < 0 ? "-Inf" : "+Inf";
  return `${v}`;
}
