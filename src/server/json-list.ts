import type { Context } from "hono";

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
      const end = Math.min(items.length, next + SLICE);
      // Buffer.from, not TextEncoder: Node 20's TextEncoder took five times as long.
      const slice = Buffer.from(JSON.stringify(items.slice(next, end).map((x) => toJson(x))));
      next = end;
      // `[a,b]` -> `[a,b` then `,c,d` ... `,y,z]`: one array's items, without copying the text.
      if (!first) slice[0] = COMMA;
      if (next < items.length) {
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
