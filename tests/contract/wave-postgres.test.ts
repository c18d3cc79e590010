import { postgresBackend } from "../support/backends.js";
import { defineWaveStoreContract } from "./wave-store.contract.js";

await defineWaveStoreContract(postgresBackend);
