/** The version `quiesce --version` prints; bin/quiesce.js answers it without loading the CLI. */
export const VERSION = "0.1.0";
