import { invalidInput } from "./errors.js";

/**
 * Names in the journal end up in SQL rows, in provider requests (the idempotency key) and in
 * shell commands (`runs resolve RUN --effect KEY`): printable ASCII without spaces, bounded.
 */
const KEY = /^[A-Za-z0-9][A-Za-z0-9._:/@+=#-]*$/;
const ID = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
export const MAX_KEY_LENGTH = 200;
export const MAX_ID_LENGTH = 120;

/**
 * An idempotency key names the logical operation (`invoice:8472:send`), so every attempt of it
 * carries the same key. A key that is the same for different operations merges them; a fresh
 * random key per attempt defeats the provider's deduplication.
 */
export function validateEffectKey(key: string, what = "effect key"): string {
  if (key.length === 0) throw invalidInput(`${what}: the key is empty`);
  if (key.length > MAX_KEY_LENGTH)
    throw invalidInput(`${what}: ${key.length} characters; the limit is ${MAX_KEY_LENGTH}`);
  if (!KEY.test(key))
    throw invalidInput(
      `${what}: "${key}" is not a valid idempotency key (letters, digits and . _ : / @ + = # - only, e.g. invoice:8472:send)`,
    );
  return key;
}

function validateId(value: string, what: string, example: string): string {
  if (value.length === 0) throw invalidInput(`${what}: it is empty`);
  if (value.length > MAX_ID_LENGTH)
    throw invalidInput(`${what}: ${value.length} characters; the limit is ${MAX_ID_LENGTH}`);
  if (!ID.test(value))
    throw invalidInput(
      `${what}: "${value}" is not valid (letters, digits and . _ : - only, e.g. ${example})`,
    );
  return value;
}

export function validateRuntimeId(id: string, what = "runtime id"): string {
  return validateId(id, what, "agent-1");
}

export function validateRunId(id: string, what = "run id"): string {
  return validateId(id, what, "r-1f2e");
}

export function validateMaintenanceId(id: string, what = "--id"): string {
  return validateId(id, what, "mw-2024-06-01");
}

export function validateProviderName(name: string, what = "provider name"): string {
  return validateId(name, what, "payments");
}

/** The lease scope a runtime holds; every run of the runtime is fenced by it (I3). */
export function runtimeScope(runtimeId: string): string {
  return `runtime:${runtimeId}`;
}
