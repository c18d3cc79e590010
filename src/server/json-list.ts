import type { Context } from "hono";
import type { LeaseText } from "../lease/lease-json.js";

/**
 * Items per slice: their JSON objects die young, and a slice of leases (about 90 KB) stays under
 * malloc's 128 KiB mmap threshold, so its buffer is not a fresh mapping paid for in page faults.
 * Measured with 10,000 leases: 25 to 200 cost about the same, 500 half as much again, one slice
 * of all twice as much.
 */
const SLICE = 200;
const COMMA = 0x2c;

/**
 * `c.json({ ...head, [key]: items.map(toJson) })`, byte for byte, written a slice of items at a
 * time as the client takes it. GET /api/leases with 10,000 leases is 4.6 MB of JSON: one
 * JSON.stringify of it all kept every lease's JSON object alive at once (the garbage collector
 * copied them all) and built the whole text before its first byte left; a slice is formatted
 * while the one before it is on the wire. The items are read before the response starts, so a
 * store error is still an error response, never a cut-off body.
 */
export function jsonList<T>(
  c: Context,
  head: Record<string, unknown>,
  key: string,
  items: readonly T[],
  toJson: (item: T) => unknown,
): Response {
  return sliced(c, head, key, items.length, (from, to) =>
    // Buffer.from, not TextEncoder: Node 20's TextEncoder took five times as long.
    Buffer.from(JSON.stringify(items.slice(from, to).map((x) => toJson(x)))),
  );
}

/**
 * jsonList for leases kept as JSON parts (see leaseText): each lease is its head and tail
 * bytes copied around its clock's fields, into one buffer per slice, so no text of the whole
 * listing is built and encoded again for every request.
 */
export function leaseTextList(
  c: Context,
  head: Record<string, unknown>,
  key: string,
  texts: readonly LeaseText[],
  clockText: (t: LeaseText) => string,
): Response {
  return sliced(c, head, key, texts.length, (from, to) => {
    const middles = new Array<string>(to - from);
    let size = 2 + Math.max(0, to - from - 1); // [ ] and the commas
    for (let i = from; i < to; i++) {
      const t = texts[i]!;
      const m = clockText(t);
      middles[i - from] = m;
      size += t.head.length + m.length + t.tail.length; // the clock's fields are ASCII
    }
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    out[at++] = 0x5b; // [
    for (let i = from; i < to; i++) {
      const t = texts[i]!;
      if (i > from) out[at++] = COMMA;
      at += t.head.copy(out, at);
      at += out.write(middles[i - from]!, at, "latin1");
      at += t.tail.copy(out, at);
    }
    out[at++] = 0x5d; // ]
    return out;
  });
}

/** The body of both: `arrayBytes(from, to)` is the JSON array of items from..to-1. */
function sliced(
  c: Context,
  head: Record<string, unknown>,
  key: string,
  count: number,
  arrayBytes: (from: number, to: number) => Buffer,
): Response {
  const open = JSON.stringify(head);
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(
        Buffer.from(`${open === "{}" ? "{" : `${open.slice(0, -1)},`}${JSON.stringify(key)}:`),
      );
    },
    pull(controller) {
      const first = next === 0;
      const end = Math.min(count, next + SLICE);
      const slice = arrayBytes(next, end);
      next = end;
      // `[a,b]` -> `[a,b` then `,c,d` ... `,y,z]`: one array's items, without copying the text.
      if (!first) slice[0] = COMMA;
      if (next < count) {
        controller.enqueue(slice.subarray(0, -1));
        return;
      }
      controller.enqueue(slice);
      controller.enqueue(Buffer.from("}"));
      controller.close();
    },
  });
  return c.body(body, 200, { "content-type": "application/json" });
}
