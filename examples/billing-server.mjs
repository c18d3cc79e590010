// A tiny "billing provider" on 127.0.0.1 for the examples: it counts invoices per
// Idempotency-Key, sends each key only once, and counts the requests it receives. No network beyond loopback.
import http from "node:http";

export async function startBilling() {
  const sent = new Map();
  const stats = { requests: 0 };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      stats.requests++;
      // The header is a structured-field string: "invoice:8472:send", quotes included.
      const key = (req.headers["idempotency-key"] ?? "").replace(/^"|"$/g, "");
      if (!sent.has(key)) sent.set(key, `inv-${sent.size + 1}`);
      res.writeHead(200, { "content-type": "application/json", "request-id": sent.get(key) });
      res.end(JSON.stringify({ invoice: sent.get(key), key }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return { url, sent, stats, close: () => server.close() };
}
