import { readFileSync, statSync } from "node:fs";
import { isIP } from "node:net";
import { invalidInput } from "../domain/errors.js";

export const DEFAULT_LISTEN = "127.0.0.1:7433";

export interface ListenAddress {
  host: string;
  port: number;
}

/** `HOST:PORT`, `[V6]:PORT` or `:PORT` (loopback); port 0 picks a free one (tests). */
export function parseListen(spec: string): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(spec.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535)
    throw invalidInput(`--listen: "${spec}" is not HOST:PORT (e.g. 127.0.0.1:7433 or [::1]:7433)`);
  const host = m[1] ?? (m[2] === "" ? "127.0.0.1" : m[2]!);
  if (m[1] !== undefined && isIP(host) !== 6)
    throw invalidInput(`--listen: "${host}" is not an IPv6 address`);
  return { host, port };
}

/** Only loopback addresses count as local: anything else is reachable from other hosts. */
export function isLoopback(host: string): boolean {
  if (host === "localhost" || host === "::1") return true;
  return isIP(host) === 4 && host.startsWith("127.");
}

/**
 * Reads the operators' token. The file must belong to no group or world (mode 0600 or 0400):
 * a token others on the host can read is no secret, so it is refused rather than used.
 */
export function readTokenFile(path: string): string {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (e) {
    throw invalidInput(`--token-file: cannot read ${path}: ${(e as Error).message}`);
  }
  if ((mode & 0o077) !== 0)
    throw invalidInput(
      `--token-file: ${path} is readable by its group or others (mode ${(mode & 0o777).toString(8)}); chmod 600 it`,
    );
  const token = readFileSync(path, "utf8").trim();
  if (token.length < 16)
    throw invalidInput(`--token-file: the token in ${path} is shorter than 16 characters`);
  if (/\s/.test(token))
    throw invalidInput(`--token-file: the token in ${path} holds whitespace; one line, one token`);
  return token;
}

/** Listening beyond loopback without a token would let anyone on the network act: refused. */
export function checkExposure(address: ListenAddress, token: string | null): void {
  if (token === null && !isLoopback(address.host))
    throw invalidInput(
      `--listen ${address.host}: listening beyond loopback needs --token-file (operators' actions would be open to the network)`,
    );
}
