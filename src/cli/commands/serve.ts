import type { Command } from "commander";
import { closeSession, openSession, say, withStore } from "../context.js";

const DEFAULT_MAX_HOLD_MS = 12 * 3_600_000;

interface ServeFlags {
  listen: string;
  tokenFile?: string;
  store?: string;
  config?: string;
}

/** `quiesce serve`: the JSON API, /metrics and the live dashboard, until SIGTERM or SIGINT. */
export function registerServe(program: Command): void {
  withStore(
    program
      .command("serve")
      .summary("a JSON API, Prometheus /metrics and a live dashboard for the store")
      .description(
        "Serve the store over HTTP: the dashboard at /, the JSON API under /api\n" +
          "(the same shapes as --json), /metrics for Prometheus and /healthz.\n" +
          "Read-only unless --token-file is given: operator actions (break, resolve,\n" +
          "stop a wave, drain a runtime) then need `Authorization: Bearer <token>`\n" +
          "and are recorded with the operator's name. Listening beyond loopback\n" +
          "needs --token-file. SIGTERM ends the streams and exits 0.",
      )
      .option("--listen <host:port>", "address to listen on", "127.0.0.1:7433")
      .option(
        "--token-file <file>",
        "file holding the operators' token (mode 600: refused if its group or others can read it)",
      ),
  ).action(async (flags: ServeFlags) => {
    // Loaded only for this command: the rest of the CLI does not pay for the HTTP stack.
    const { parseListen, readTokenFile, checkExposure } =
      await import("../../server/serve-options.js");
    const listen = parseListen(flags.listen);
    const token = flags.tokenFile === undefined ? null : readTokenFile(flags.tokenFile);
    checkExposure(listen, token); // refused before the store is opened
    const { startServer } = await import("../../server/server.js");
    const session = await openSession(flags);
    let server;
    try {
      server = await startServer({
        leases: session.leases,
        listen,
        token,
        maxHoldMs: session.config.check.maxHoldMs ?? DEFAULT_MAX_HOLD_MS,
      });
    } catch (e) {
      await closeSession(session);
      throw e;
    }
    say(
      `serving ${session.leases.store.backend} store on ${server.url} (${token === null ? "read-only: no --token-file" : "operator actions need the token"})`,
    );
    await new Promise<void>((resolve) => {
      const stop = () => {
        // A second signal, or a shutdown that hangs, must still end the process.
        process.once("SIGTERM", () => process.exit(1));
        process.once("SIGINT", () => process.exit(1));
        setTimeout(() => process.exit(1), 10_000).unref();
        resolve();
      };
      process.once("SIGTERM", stop);
      process.once("SIGINT", stop);
    });
    await server.close();
    await closeSession(session);
    say("stopped");
  });
}
