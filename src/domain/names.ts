import { invalidInput } from "./errors.js";

export const MAX_SCOPE_LENGTH = 200;
export const MAX_SYSTEM_LENGTH = 64;
export const MAX_NOTE_LENGTH = 1000;

/**
 * Scopes name what a lease protects: `patch:wave`, `host:db-7`, `backup/nightly`. They end up
 * in shell scripts, SQL rows and metric labels, so they are kept to printable ASCII without
 * spaces, and bounded so one bad script cannot bloat every listing.
 */
const SCOPE = /^[A-Za-z0-9][A-Za-z0-9._:/@+=-]*$/;
const SYSTEM = /^[a-z0-9][a-z0-9._-]*$/;

export function validateScope(scope: string, what = "scope"): string {
  if (scope.length === 0) throw invalidInput(`${what}: the scope name is empty`);
  if (scope.length > MAX_SCOPE_LENGTH) {
    throw invalidInput(
      `${what}: the scope name is ${scope.length} characters long; the limit is ${MAX_SCOPE_LENGTH}`,
    );
  }
  if (!SCOPE.test(scope)) {
    throw invalidInput(
      `${what}: "${scope}" is not a valid scope name (start with a letter or digit; then letters, digits and . _ : / @ + = - only)`,
    );
  }
  return scope;
}

/** The system that owns a lease: `quiesce` for our own agents, `backup`, `hypervisor`, ... */
export function validateSystem(system: string, what = "--system"): string {
  if (system.length === 0 || system.length > MAX_SYSTEM_LENGTH || !SYSTEM.test(system)) {
    throw invalidInput(
      `${what}: "${system}" is not a valid system name (lowercase letters, digits, . _ -; at most ${MAX_SYSTEM_LENGTH})`,
    );
  }
  return system;
}

export function validateNote(note: string, what = "--note"): string {
  if (note.length > MAX_NOTE_LENGTH) {
    throw invalidInput(
      `${what}: the note is ${note.length} characters; the limit is ${MAX_NOTE_LENGTH}`,
    );
  }
  return note;
}

export function parseToken(text: string, what = "--token"): number {
  if (!/^\d{1,15}$/.test(text.trim()) || Number(text) < 1) {
    throw invalidInput(`${what}: "${text}" is not a fencing token (a positive integer)`);
  }
  return Number(text);
}
