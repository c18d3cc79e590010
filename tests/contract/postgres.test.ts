import { postgresBackend } from "../support/backends.js";
import { defineLeaseStoreContract } from "./lease-store.contract.js";

await defineLeaseStoreContract(postgresBackend);
