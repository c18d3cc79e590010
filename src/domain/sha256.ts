import type * as NodeCrypto from "node:crypto";
import { createRequire } from "node:module";

type Crypto = typeof NodeCrypto;
let crypto: Crypto | undefined;

/**
 * The SHA-256 of a text, in hex. node:crypto is loaded on the first call, not on import: it
 * costs a process about 4 ms to load (bench/startup.ts), and `quiesce run` hashes nothing.
 */
export function sha256Hex(text: string): string {
  crypto ??= createRequire(import.meta.url)("node:crypto") as Crypto;
  // The one-shot hash (Node 20.12 on) takes half the time of a Hash object: every journal
  // transition seals its record with one.
  return typeof crypto.hash === "function"
    ? crypto.hash("sha256", text, "hex")
    : crypto.createHash("sha256").update(text).digest("hex");
}
