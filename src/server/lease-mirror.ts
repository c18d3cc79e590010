import type { LeaseRecord } from "../domain/lease.js";
import { leaseText, type LeaseText } from "../lease/lease-json.js";
import type { KnownVersions, Store } from "../store/store.js";

/** The held leases as of one read of the store, with their JSON parts (see leaseText). */
export interface LeaseRead {
  now: number;
  leases: LeaseRecord[];
  texts: LeaseText[];
}

interface Entry {
  version: string;
  text: LeaseText;
  /** The read that last saw it held (the others are dropped after each read). */
  seen: number;
  /** Its place in the last read's order. */
  index: number;
}

/**
 * The server's copy of the held leases. Every read goes to the store (the answer is the store
 * as of that read, never an older copy), but asks only what changed since the last one
 * (`readLeasesSince`): the rows that changed are read and formatted again, the others are kept
 * with their JSON. With 10,000 leases held, reading and formatting them all was most of what
 * GET /api/leases, /metrics and each dashboard refresh cost, while between two requests only
 * the leases renewed in between change.
 *
 * A request never gets a read that began before it (an operator's break, then a listing,
 * must show the break): one that arrives while a read is on its way waits for the next,
 * which every request arriving meanwhile shares. So however many clients ask, there are at
 * most two reads at a time, one running and one waiting, as the event stream reads the log
 * once per tick for every client.
 */
export class LeaseMirror {
  private readonly entries = new Map<string, Entry>();
  /** The entries of the last read, in its (scope) order, for find(). */
  private order: Entry[] = [];
  private cursor = 0;
  private readonly known: KnownVersions = { get: (scope) => this.find(scope)?.version };
  private reads = 0;
  private inFlight: Promise<LeaseRead> | null = null;
  private queued: Promise<LeaseRead> | null = null;

  constructor(private readonly store: Store) {}

  read(): Promise<LeaseRead> {
    if (this.inFlight === null) return this.start();
    this.queued ??= this.inFlight.then(
      () => this.next(),
      () => this.next(),
    );
    return this.queued;
  }

  private next(): Promise<LeaseRead> {
    this.queued = null;
    return this.start();
  }

  private start(): Promise<LeaseRead> {
    const p = this.refresh().finally(() => {
      if (this.inFlight === p) this.inFlight = null;
    });
    this.inFlight = p;
    return p;
  }

  /** For readers that want listLeases' shape (the check, the dashboard's snapshot). */
  async listLeases(): Promise<{ leases: LeaseRecord[]; now: number }> {
    const r = await this.read();
    return { leases: r.leases, now: r.now };
  }

  /**
   * The entry of `scope`. Both the store and refresh() ask in scope order, the order of the
   * last read: the next entry in that order is checked first, and the map only when it is not
   * the one (a lease came or went). With 10,000 leases, hashing every scope twice per request
   * was a tenth of it.
   */
  private find(scope: string): Entry | undefined {
    let e = this.order[this.cursor];
    if (e === undefined || e.text.lease.scope !== scope) {
      e = this.entries.get(scope);
      if (e === undefined) return undefined;
      this.cursor = e.index;
    }
    this.cursor++;
    return e;
  }

  private async refresh(): Promise<LeaseRead> {
    this.cursor = 0;
    const r = await this.store.leases.readLeasesSince(this.known);
    const read = ++this.reads;
    this.cursor = 0;
    const n = r.scopes.length;
    const order = new Array<Entry>(n);
    const texts = new Array<LeaseText>(n);
    const leases = new Array<LeaseRecord>(n);
    for (let i = 0; i < n; i++) {
      const scope = r.scopes[i]!;
      const changed = r.changed.size === 0 ? undefined : r.changed.get(scope);
      let e = this.find(scope);
      if (changed !== undefined) {
        e = { version: changed.version, text: leaseText(changed.lease), seen: read, index: i };
        this.entries.set(scope, e);
      } else if (e === undefined) {
        // Unchanged, says the store, but not in the copy: the copy is not what the store
        // compared against. Start again from nothing rather than show less than is held.
        this.entries.clear();
        this.order = [];
        return this.refresh();
      }
      e.seen = read;
      order[i] = e;
      texts[i] = e.text;
      leases[i] = e.text.lease;
    }
    if (this.entries.size > n)
      for (const [scope, e] of this.entries) if (e.seen !== read) this.entries.delete(scope);
    // Where each entry stands now, for the next read's find().
    for (let i = 0; i < n; i++) order[i]!.index = i;
    this.order = order;
    return { now: r.now, leases, texts };
  }
}
