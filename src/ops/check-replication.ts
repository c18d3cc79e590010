import type { CheckCollector, CheckFinding } from "./check.js";

/**
 * A PostgreSQL store whose standbys are all asynchronous (WARNING): a failover could lose
 * acknowledged leases and host states and hand out a fencing token again (I2). SQLite and a
 * server without standbys have nothing to say. The judgement is domain/replication.ts's.
 */
export const replicationCollector: CheckCollector = {
  name: "replication",
  async collect({ store }) {
    const replication = await store.replication();
    const findings: CheckFinding[] = [];
    if (replication?.tokensMayGoBack)
      findings.push({
        severity: "warning",
        code: "async_replication",
        subject: "store",
        message: `the store's PostgreSQL replicates ${replication.summary}: fencing tokens could go back after a failover`,
      });
    return {
      findings,
      metrics: [
        {
          perf: "async_replication",
          prom: "store_replication_asynchronous",
          help: "1 when a failover of the store's PostgreSQL could reissue fencing tokens",
          value: replication?.tokensMayGoBack ? 1 : 0,
        },
      ],
    };
  },
};
