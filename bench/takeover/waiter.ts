/**
 * A waiter for the takeover bench: waits in line (`--wait`) for SCOPE, which takes over the
 * stale lease once its owner is shown dead. Prints one JSON line: when it got the lease (wall
 * clock) and the takeover record (store clock times of the previous owner's last heartbeat and
 * expiry, and of the takeover itself).
 */
import { openLeases } from "../../src/index.js";

const [store, scope, ttl, wait] = process.argv.slice(2) as [string, string, string, string];
const leases = await openLeases({ store });
process.stdout.write("waiting\n");
const lease = await leases.acquire(scope, { ttl, wait, keepAlive: false });
const gotAt = Date.now();
const t = lease.record.takeover;
process.stdout.write(
  JSON.stringify({
    gotAt,
    acquiredAt: lease.record.acquiredAt,
    token: lease.token,
    previousHeartbeatAt: t?.previous.heartbeatAt ?? null,
    previousExpiresAt: t?.previous.expiresAt ?? null,
    basis: t?.basis ?? null,
  }) + "\n",
);
await lease.release("bench");
await leases.close();
