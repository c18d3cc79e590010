/**
 * What a PostgreSQL server's replication means for quiesce after a failover. A commit the
 * primary acknowledged is on a standby only if the standby confirmed it first (a synchronous
 * standby and `synchronous_commit` of `on`, `remote_write` or `remote_apply`). Otherwise a
 * promoted standby can lack acknowledged writes: a lease granted, a host marked succeeded, and
 * the fencing counter itself, so a token already handed out is handed out again (I2 breaks).
 */
export interface ReplicationFacts {
  /** `synchronous_commit` of quiesce's own sessions. */
  synchronousCommit: string;
  synchronousStandbyNames: string;
  /** Connected standbys (pg_stat_replication); `syncState` null when this role may not see it. */
  standbys: { name: string; syncState: string | null }[];
}

export type ReplicationDurability = "standalone" | "synchronous" | "asynchronous" | "unknown";

export interface ReplicationVerdict {
  durability: ReplicationDurability;
  /** A failover to a standby can lose acknowledged writes and reissue fencing tokens. */
  tokensMayGoBack: boolean;
  summary: string;
}

const WAITS_FOR_STANDBY = new Set(["on", "remote_write", "remote_apply"]);

export function judgeReplication(f: ReplicationFacts): ReplicationVerdict {
  if (f.standbys.length === 0)
    return {
      durability: "standalone",
      tokensMayGoBack: false,
      summary: "no standby connected",
    };
  const names = f.standbys.map((s) => `${s.name || "(unnamed)"} ${s.syncState ?? "?"}`);
  const list = names.join(", ");
  if (f.standbys.some((s) => s.syncState === null))
    return {
      durability: "unknown",
      tokensMayGoBack: false,
      summary: `${f.standbys.length} standby(s), their sync state is not visible to this role (grant pg_monitor)`,
    };
  const confirmed = f.standbys.filter((s) => s.syncState === "sync" || s.syncState === "quorum");
  if (confirmed.length > 0 && WAITS_FOR_STANDBY.has(f.synchronousCommit))
    return {
      durability: "synchronous",
      tokensMayGoBack: false,
      summary: `synchronous (${list}; synchronous_commit=${f.synchronousCommit}): an acknowledged write is on a synchronous standby; fail over only to one of those`,
    };
  const why =
    confirmed.length > 0
      ? `synchronous_commit=${f.synchronousCommit} does not wait for the standby`
      : "no standby is synchronous (synchronous_standby_names, synchronous_commit = on)";
  return {
    durability: "asynchronous",
    tokensMayGoBack: true,
    summary: `asynchronous (${list}): ${why}; after a failover, acknowledged leases, host states and fencing tokens can be lost and tokens reissued`,
  };
}
