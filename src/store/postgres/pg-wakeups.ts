import { createHash } from "node:crypto";
import pg from "pg";
import { WakeBoard } from "../wake-board.js";
import type { ScopeWatch } from "../store.js";
import type { PgTarget } from "./pg-connection.js";
import { monoMs } from "../../process/clock.js";

/** Keep the LISTEN connection this long after the last waiter left (a process that waits in a
 * loop would otherwise reconnect for every wait). */
const LINGER_MS = 5_000;
/** After a failed LISTEN connection, do not try again sooner than this. */
const RETRY_MS = 1_000;

/**
 * The store's notification channel: one per schema, so two quiesce stores in one database do
 * not wake each other. Channel names are identifiers (at most 63 bytes); a long schema name is
 * shortened with a hash.
 */
export function wakeChannel(schema: string): string {
  const name = `quiesce_wake_${schema}`;
  if (name.length <= 63) return name;
  const hash = createHash("sha256").update(schema).digest("hex").slice(0, 16);
  return `quiesce_wake_${schema.slice(0, 30)}_${hash}`;
}

/**
 * Wake-ups for waiters on a PostgreSQL store. Releases, noted expiries and waiters leaving the
 * line send `pg_notify(channel, scope)` inside their own statement, so the notice goes out at
 * commit and never before. Here, one connection of its own (not the writing pool's, whose
 * connections come and go and must not be tied up) LISTENs while anyone in this process waits.
 * A dropped connection makes the watches not `live` (waiters poll fast) until it is back.
 */
export class PgWakeups {
  readonly channel: string;
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private listening = false;
  private active = false;
  private lastFailure = -Infinity;
  private linger: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly board: WakeBoard;

  constructor(
    target: PgTarget,
    private readonly config: pg.ClientConfig,
  ) {
    this.channel = wakeChannel(target.schema);
    this.board = new WakeBoard(
      () => this.listening,
      (active) => this.setActive(active),
    );
  }

  /** Opens a watch; the LISTEN connection is being set up when it returns (not live yet). */
  watch(scope: string): ScopeWatch {
    const w = this.board.watch(scope);
    this.ensure();
    return w;
  }

  /** Resolves once the LISTEN is in place (or failed); for callers that want to be sure. */
  async ready(): Promise<boolean> {
    this.ensure();
    await this.connecting;
    return this.listening;
  }

  private setActive(active: boolean): void {
    this.active = active;
    if (this.linger) clearTimeout(this.linger);
    this.linger = null;
    if (!active && this.client) {
      this.linger = setTimeout(() => {
        if (!this.active) this.disconnect();
      }, LINGER_MS);
      this.linger.unref();
    }
  }

  private ensure(): void {
    if (this.closed || this.client || this.connecting) return;
    if (monoMs() - this.lastFailure < RETRY_MS) return;
    this.connecting = this.connect().finally(() => (this.connecting = null));
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.config);
    const lost = () => {
      if (this.client !== client) return;
      this.client = null;
      this.listening = false;
      this.lastFailure = monoMs();
      client.end().catch(() => undefined);
    };
    client.on("error", lost);
    client.on("end", lost);
    client.on("notification", (m) => {
      if (m.channel !== this.channel) return;
      // "SCOPE TICKET" names the waiter first in line; a bare "SCOPE" is for every waiter.
      const payload = m.payload ?? "";
      const space = payload.lastIndexOf(" ");
      const ticket = space < 0 ? NaN : Number(payload.slice(space + 1));
      if (Number.isSafeInteger(ticket)) this.board.hint(payload.slice(0, space), ticket);
      else this.board.hint(payload);
    });
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
      if (this.client !== client || this.closed) throw new Error("closed while connecting");
      this.listening = true;
      // The connection must not keep a finished process alive.
      (
        client as unknown as { connection?: { stream?: { unref?: () => void } } }
      ).connection?.stream?.unref?.();
      if (!this.active) this.setActive(false);
    } catch {
      lost();
    }
  }

  private disconnect(): void {
    const c = this.client;
    this.client = null;
    this.listening = false;
    c?.end().catch(() => undefined);
  }

  close(): void {
    this.closed = true;
    if (this.linger) clearTimeout(this.linger);
    this.disconnect();
  }
}
