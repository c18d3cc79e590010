/**
 * A lease holder for the takeover bench: acquires SCOPE with the library and keeps it renewed
 * until it is SIGKILLed. Prints "ready <heartbeatMs>" once it holds the lease.
 */
import { openLeases } from "../../src/index.js";

const [store, scope, ttl] = process.argv.slice(2) as [string, string, string];
const leases = await openLeases({ store });
const lease = await leases.acquire(scope, { ttl });
process.stdout.write(`ready ${lease.timing.heartbeatMs}\n`);
setInterval(() => undefined, 1 << 30); // stay alive until killed
