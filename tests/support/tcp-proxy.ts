import net from "node:net";

/**
 * A loopback TCP proxy in front of PostgreSQL that a test can cut: `cut()` drops every open
 * connection and refuses new ones (the store "goes away"); `stall()` is a partition instead:
 * connections stay open but nothing gets through, old or new, so every request hangs until
 * the client's own timeouts; `down()` is a stopped server: open connections dropped, the port
 * closed (a new connection is refused, ECONNREFUSED); `restore()` lets them through again.
 */
export interface TcpProxy {
  port: number;
  cut(): void;
  down(): Promise<void>;
  stall(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(
  targetPort: number,
  targetHost = "127.0.0.1",
): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let open = true;
  let stalled = false;
  const server = net.createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    if (stalled) {
      // Accepted, never answered: what a client sees of a server behind a partition.
      sockets.add(client);
      client.on("close", () => sockets.delete(client));
      client.on("error", () => undefined);
      client.pause();
      return;
    }
    const upstream = net.connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    // Forwarding by hand, so that a stall can drop what arrives instead of passing it on.
    client.on("data", (d: Buffer) => {
      if (!stalled) upstream.write(d);
    });
    upstream.on("data", (d: Buffer) => {
      if (!stalled) client.write(d);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    stall() {
      stalled = true;
    },
    async down() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
    async restore() {
      open = true;
      stalled = false;
      if (!server.listening)
        await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
