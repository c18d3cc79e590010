import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startCli, waitFor, type CliProcess, type CliResult } from "./cli.js";
import { tempDir } from "./paths.js";

export const TOKEN = "test-operator-token-0123456789";

export interface Served {
  base: string;
  proc: CliProcess;
  /** SIGTERM, then the exit. */
  stop(): Promise<CliResult>;
}

/** `quiesce serve` on a free loopback port, as a real process; with the token unless told. */
export async function startServe(
  url: string,
  o: { token?: boolean; env?: NodeJS.ProcessEnv; args?: readonly string[] } = {},
): Promise<Served> {
  const t = tempDir("quiesce-serve-");
  const args = ["serve", "--listen", "127.0.0.1:0", "--store", url, ...(o.args ?? [])];
  if (o.token !== false) {
    const file = join(t.dir, "token");
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    args.push("--token-file", file);
  }
  const proc = startCli(args, o.env);
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const base = await waitFor("quiesce serve to listen", () => {
    if (exited) throw new Error(`quiesce serve exited: ${proc.stderr()}`);
    return /serving \S+ store on (http:\/\/\S+)/.exec(proc.stderr())?.[1];
  });
  let stopped: Promise<CliResult> | null = null;
  const stop = () => {
    stopped ??= (async () => {
      if (!exited) proc.child.kill("SIGTERM");
      const r = await proc.done;
      t.cleanup();
      return r;
    })();
    return stopped;
  };
  return { base, proc, stop };
}

export interface Answer<T = Record<string, unknown>> {
  status: number;
  json: T;
  text: string;
  headers: Headers;
}

export async function get<T = Record<string, unknown>>(
  base: string,
  path: string,
): Promise<Answer<T>> {
  const r = await fetch(base + path);
  const text = await r.text();
  return { status: r.status, text, json: parse(text) as T, headers: r.headers };
}

export async function post<T = Record<string, unknown>>(
  base: string,
  path: string,
  body: unknown,
  token: string | null = TOKEN,
): Promise<Answer<T>> {
  const r = await fetch(base + path, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, text, json: parse(text) as T, headers: r.headers };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

/** A server-sent-events client on fetch: collects the messages; `close()` hangs up. */
export function openSse(url: string, headers: Record<string, string> = {}) {
  const messages: SseMessage[] = [];
  const abort = new AbortController();
  let ended = false;
  const done = (async () => {
    const r = await fetch(url, { headers, signal: abort.signal });
    if (!r.ok || !r.body) throw new Error(`stream answered ${r.status}`);
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let i: number;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const m: SseMessage = { id: null, event: "message", data: "" };
        let hasData = false;
        for (const line of block.split("\n")) {
          const [k, ...rest] = line.split(":");
          const v = rest.join(":").replace(/^ /, "");
          if (k === "id") m.id = v;
          else if (k === "event") m.event = v;
          else if (k === "data") {
            m.data += (hasData ? "\n" : "") + v;
            hasData = true;
          }
        }
        if (hasData) messages.push(m);
      }
    }
  })()
    .catch((e: Error) => {
      if (e.name !== "AbortError") throw e;
    })
    .finally(() => (ended = true));
  return {
    messages,
    /** Resolves when the server ended the stream (or it was closed here). */
    done,
    ended: () => ended,
    close: () => abort.abort(),
    /** Waits for a message matching `pred`; returns it. */
    waitFor: (what: string, pred: (m: SseMessage) => boolean, timeoutMs = 15_000) =>
      waitFor(what, () => messages.find(pred), timeoutMs),
  };
}

/** One sentence: no line breaks, no stack frames, ends like a sentence would. */
export function isOneSentence(error: unknown): boolean {
  return (
    typeof error === "string" &&
    error.length > 0 &&
    !error.includes("\n") &&
    !/\bat .+:\d+:\d+/.test(error)
  );
}
