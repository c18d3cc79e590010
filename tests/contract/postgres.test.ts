import { postgresBackend } from "../support/backends.js";
import { defineLeaseStoreContract } from "./lease-store.contract.js";

await defineLeaseStoreContract(postgresBackend);
import { defineLeaseWakeupsContract } from "./lease-wakeups.contract.js";
await defineLeaseWakeupsContract(postgresBackend);
import { defineLeaseVersionsContract } from "./lease-versions.contract.js";
await defineLeaseVersionsContract(postgresBackend);
import { defineLeaseChildPidsContract } from "./lease-child-pids.contract.js";
await defineLeaseChildPidsContract(postgresBackend);
import { defineLeaseAcquireTogetherContract } from "./lease-acquire-together.contract.js";
await defineLeaseAcquireTogetherContract(postgresBackend);
