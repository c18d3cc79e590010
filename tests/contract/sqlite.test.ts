import { sqliteBackend } from "../support/backends.js";
import { defineLeaseStoreContract } from "./lease-store.contract.js";

await defineLeaseStoreContract(sqliteBackend);
import { defineLeaseWakeupsContract } from "./lease-wakeups.contract.js";
await defineLeaseWakeupsContract(sqliteBackend);
import { defineLeaseVersionsContract } from "./lease-versions.contract.js";
await defineLeaseVersionsContract(sqliteBackend);
import { defineLeaseChildPidsContract } from "./lease-child-pids.contract.js";
await defineLeaseChildPidsContract(sqliteBackend);
import { defineLeaseAcquireTogetherContract } from "./lease-acquire-together.contract.js";
await defineLeaseAcquireTogetherContract(sqliteBackend);
