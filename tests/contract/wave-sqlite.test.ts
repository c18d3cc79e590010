import { sqliteBackend } from "../support/backends.js";
import { defineWaveStoreContract } from "./wave-store.contract.js";

await defineWaveStoreContract(sqliteBackend);
