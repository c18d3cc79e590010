import { createHash } from "node:crypto";
import { invalidInput } from "./errors.js";
import { validateEffectKey } from "./journal-names.js";

/**
 * The one text of a JSON-like value, so that the same logical input always hashes the same:
 * object keys sorted (by code unit), strings in Unicode NFC (keys too), numbers as JSON
 * writes them (`1.0` and `1` are one number, `-0` is `0`), `undefined` members dropped as
 * JSON.stringify drops them. What JSON cannot carry faithfully (NaN, Infinity, bigint,
 * functions, symbols, cycles) is refused rather than silently changed.
 */
export function canonicalJson(value: unknown): string {
  return write(value, new Set(), "input");
}

function write(v: unknown, seen: Set<object>, path: string): string {
  if (v === null) return "null";
  switch (typeof v) {
    case "string":
      return JSON.stringify(v.normalize("NFC"));
    case "boolean":
      return v ? "true" : "false";
    case "number":
      if (!Number.isFinite(v)) throw invalidInput(`${path}: ${v} cannot be part of a JSON input`);
      return JSON.stringify(Object.is(v, -0) ? 0 : v);
    case "object": {
      if (seen.has(v)) throw invalidInput(`${path}: the input refers to itself`);
      seen.add(v);
      try {
        const withJson = v as { toJSON?: () => unknown };
        if (typeof withJson.toJSON === "function") return write(withJson.toJSON(), seen, path);
        if (Array.isArray(v))
          return `[${v.map((x, i) => (x === undefined ? "null" : write(x, seen, `${path}[${i}]`))).join(",")}]`;
        const members = Object.entries(v as Record<string, unknown>)
          .filter(([, x]) => x !== undefined && typeof x !== "function" && typeof x !== "symbol")
          .map(([k, x]) => [k.normalize("NFC"), x] as const)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        return `{${members.map(([k, x]) => `${JSON.stringify(k)}:${write(x, seen, `${path}.${k}`)}`).join(",")}}`;
      } finally {
        seen.delete(v);
      }
    }
    case "bigint":
    case "function":
    case "symbol":
    case "undefined":
      throw invalidInput(`${path}: a ${typeof v} cannot be part of a JSON input`);
  }
  throw invalidInput(`${path}: this value cannot be part of a JSON input`);
}

/** SHA-256 of the canonical text, hex, first 32 characters (128 bits: collisions are not a concern). */
export function inputHash(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex").slice(0, 32);
}

/**
 * The idempotency key of a call when the caller named no logical operation: the tool's name and
 * the hash of its input. The same input to the same tool within a run is the same operation;
 * nothing about the attempt (a call id, a time, a counter) goes in, or a replay would get a new
 * key and run again.
 */
export function derivedKey(name: string, input: unknown): string {
  return validateEffectKey(`${name}:${inputHash(input)}`, `the key derived for ${name}`);
}

/** A caller's key function's answer: a valid key string, or one sentence. */
export function checkKey(key: unknown, name: string): string {
  if (typeof key !== "string")
    throw invalidInput(
      `${name}: the idempotency key must be a string, not ${key === null ? "null" : typeof key} (e.g. \`invoice:\${input.id}:send\`)`,
    );
  return validateEffectKey(key, `${name}: the key`);
}
