import { sqliteBackend } from "../support/backends.js";
import { defineJournalStoreContract } from "./journal-store.contract.js";

await defineJournalStoreContract(sqliteBackend);
