import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { EventKind } from "../../src/domain/event.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { WaveDefinition, WaveWrite } from "../../src/store/wave-store.js";
import type { Backend } from "../support/backends.js";
import { owner } from "./lease-store.contract.js";

const SCOPE = "wave:w1";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function def(over: Partial<WaveDefinition> = {}): WaveDefinition {
  return {
    name: "w1",
    batchSpec: "10%",
    batchSize: 1,
    failureSpec: "1",
    maxFailures: 1,
    window: "Sat 02:00-06:00",
    maxPerGroup: 1,
    event: {
      kind: EventKind.WaveCreated,
      scope: SCOPE,
      token: null,
      runId: null,
      host: "test-host",
      pid: 1,
      message: "wave w1 created",
    },
    ...over,
  };
}

const HOSTS = [
  { host: "c", group: "db" },
  { host: "a", group: null },
  { host: "b", group: "db" },
];

/** The WaveStore contract: every backend passes exactly these (tests/contract/wave-*.test.ts). */
export async function defineWaveStoreContract(backend: Backend): Promise<void> {
  const skip = await backend.skip();

  describe(`WaveStore contract: ${backend.name}`, { skip }, () => {
    async function withStore(tag: string, fn: (store: Store) => Promise<void>) {
      const loc = backend.prepare(tag);
      const store = await openStore(loc.url);
      try {
        await fn(store);
      } finally {
        await store.close();
        await loc.cleanup();
      }
    }
    const acquire = async (store: Store, ttlMs = 10_000, scope = SCOPE) => {
      const r = await store.leases.acquire({ scope, ttlMs, owner: owner("r-a"), ticket: null });
      assert.ok(r.ok, "acquired");
      return r.lease.token;
    };
    const hostWrite = (
      token: number,
      over: Partial<Extract<WaveWrite, { kind: "host" }>> = {},
    ): WaveWrite => ({
      kind: "host",
      wave: "w1",
      token,
      host: "a",
      from: "pending",
      to: "running",
      reason: null,
      detail: null,
      ...over,
    });
    const apply1 = async (store: Store, w: WaveWrite) => (await store.waves.apply([w]))[0]!;
    const hostA = async (store: Store) =>
      (await store.waves.listHosts("w1")).find((h) => h.host === "a")!;

    test("create: the wave and every host, pending, in the file's order; the same name again is refused", () =>
      withStore("wave-create", async (store) => {
        const r = await store.waves.create(def(), HOSTS);
        assert.ok(r.ok);
        const { wave } = await store.waves.getWave("w1");
        assert.equal(wave!.state, "created");
        assert.equal(wave!.hostCount, 3);
        assert.deepEqual(
          [
            wave!.batchSpec,
            wave!.batchSize,
            wave!.failureSpec,
            wave!.maxFailures,
            wave!.window,
            wave!.maxPerGroup,
          ],
          ["10%", 1, "1", 1, "Sat 02:00-06:00", 1],
        );
        assert.equal(wave!.token, null);
        const hosts = await store.waves.listHosts("w1");
        assert.deepEqual(
          hosts.map((h) => [h.host, h.group, h.state, h.ordinal, h.attempts]),
          [
            ["c", "db", "pending", 0, 0],
            ["a", null, "pending", 1, 0],
            ["b", "db", "pending", 2, 0],
          ],
        );
        const again = await store.waves.create(def({ batchSize: 9 }), [{ host: "z", group: null }]);
        assert.deepEqual(again.ok, false);
        assert.equal((await store.waves.getWave("w1")).wave!.batchSize, 1, "unchanged");
        assert.equal((await store.waves.listHosts("w1")).length, 3, "unchanged");
        const ev = await store.events.list({ scope: SCOPE });
        assert.equal(ev.filter((e) => e.kind === "wave.created").length, 1);
        assert.equal((await store.waves.getWave("nope")).wave, null);
      }));

    test("listWaves: every wave with its counts by state", () =>
      withStore("wave-list", async (store) => {
        await store.waves.create(def(), HOSTS);
        await store.waves.create(def({ name: "w2" }), [{ host: "x", group: null }]);
        const token = await acquire(store);
        assert.ok((await apply1(store, hostWrite(token))).ok);
        const { waves } = await store.waves.listWaves();
        const byName = Object.fromEntries(waves.map((w) => [w.wave.name, w.counts]));
        assert.deepEqual(byName.w1, { pending: 2, running: 1 });
        assert.deepEqual(byName.w2, { pending: 1 });
      }));

    test("listHostSummaries: listHosts' hosts, order and values, with only what status shows", () =>
      withStore("wave-host-summaries", async (store) => {
        await store.waves.create(def(), HOSTS);
        const token = await acquire(store);
        const started = await apply1(store, hostWrite(token, { start: true, runId: "wave:w1:a" }));
        assert.ok(started.ok);
        const failed = hostWrite(token, {
          from: "running",
          to: "failed",
          reason: "patch exited 3",
          detail: JSON.stringify({ exitCode: 3 }),
          finish: true,
        });
        const done = await apply1(store, failed);
        assert.ok(done.ok);
        const full = await store.waves.listHosts("w1");
        const summaries = await store.waves.listHostSummaries("w1");
        const fields = [
          "host",
          "group",
          "state",
          "attempts",
          "runId",
          "reason",
          "detail",
          "startedAt",
          "finishedAt",
        ] as const;
        assert.deepEqual(
          summaries.map((s) => Object.keys(s).sort()),
          full.map(() => [...fields].sort()),
          "exactly the summary's fields",
        );
        assert.deepEqual(
          summaries,
          full.map((h) => Object.fromEntries(fields.map((f) => [f, h[f]]))),
        );
        const a = summaries.find((h) => h.host === "a")!;
        assert.equal(a.state, "failed");
        assert.deepEqual(
          [a.reason, a.detail, a.runId, a.attempts, a.startedAt, a.finishedAt],
          ["patch exited 3", '{"exitCode":3}', "wave:w1:a", 1, started.now, done.now],
        );
        assert.deepEqual(await store.waves.listHostSummaries("nope"), []);
      }));

    test("a host state change under the current token: written with its token, attempts, times", () =>
      withStore("wave-host-write", async (store) => {
        await store.waves.create(def(), HOSTS);
        const token = await acquire(store);
        const r = await apply1(store, hostWrite(token, { start: true, runId: "wave:w1:a" }));
        assert.ok(r.ok);
        let a = await hostA(store);
        assert.deepEqual(
          [a.state, a.token, a.attempts, a.runId],
          ["running", token, 1, "wave:w1:a"],
        );
        assert.equal(a.startedAt, r.now);
        assert.equal(a.finishedAt, null);
        const done = await apply1(
          store,
          hostWrite(token, {
            from: "running",
            to: "succeeded",
            reason: "exit 0",
            detail: '{"exitCode":0}',
            finish: true,
          }),
        );
        assert.ok(done.ok);
        a = await hostA(store);
        assert.deepEqual(
          [a.state, a.reason, a.detail, a.runId, a.attempts],
          ["succeeded", "exit 0", '{"exitCode":0}', "wave:w1:a", 1],
        );
        assert.equal(a.finishedAt, done.now);
      }));

    test("a zombie's write (its token superseded) is refused, changes nothing, and is logged (I3)", () =>
      withStore("wave-zombie", async (store) => {
        await store.waves.create(def(), HOSTS);
        const old = await acquire(store, 1);
        await sleep(20);
        const stale = await store.leases.getLease(SCOPE);
        const taken = await store.leases.takeOver({
          scope: SCOPE,
          staleToken: old,
          ttlMs: 10_000,
          owner: owner("r-b"),
          ticket: null,
          record: {
            previous: { token: old, owner: stale.lease!.owner, heartbeatAt: 0, expiresAt: 0 },
            basis: "probe_dead",
            summary: "test",
            probes: [],
          },
        });
        assert.ok(taken.ok);
        const r = await apply1(store, hostWrite(old));
        assert.equal(r.ok, false);
        assert.equal(!r.ok && r.reason, "token_mismatch");
        assert.equal(!r.ok && r.current?.token, old + 1);
        assert.equal((await hostA(store)).state, "pending", "unchanged");
        const w = await apply1(store, {
          kind: "wave",
          wave: "w1",
          token: old,
          from: "created",
          to: "running",
          reason: null,
        });
        assert.equal(!w.ok && w.reason, "token_mismatch");
        assert.equal((await store.waves.getWave("w1")).wave!.state, "created");
        const ev = await store.events.list({
          scope: SCOPE,
          kinds: [EventKind.FencedWriteRejected],
        });
        assert.equal(ev.length, 2);
        assert.ok(
          await apply1(store, hostWrite(old + 1)).then((x) => x.ok),
          "the new holder writes",
        );
      }));

    test("an expired lease's write is refused even with its own token; no lease: not held", () =>
      withStore("wave-expired", async (store) => {
        await store.waves.create(def(), HOSTS);
        const none = await apply1(store, hostWrite(1));
        assert.equal(!none.ok && none.reason, "not_held");
        const token = await acquire(store, 1);
        await sleep(20);
        const r = await apply1(store, hostWrite(token));
        assert.equal(!r.ok && r.reason, "expired");
        assert.equal((await hostA(store)).state, "pending");
      }));

    test("a compare-and-swap on the state the writer saw: conflict, missing", () =>
      withStore("wave-cas", async (store) => {
        await store.waves.create(def(), HOSTS);
        const token = await acquire(store);
        const c = await apply1(store, hostWrite(token, { from: "running", to: "succeeded" }));
        assert.equal(!c.ok && c.reason, "conflict");
        const m = await apply1(store, hostWrite(token, { host: "nope" }));
        assert.equal(!m.ok && m.reason, "missing");
        const otherToken = await acquire(store, 10_000, "wave:ghost");
        const g = await apply1(store, hostWrite(otherToken, { wave: "ghost" }));
        assert.equal(!g.ok && g.reason, "missing");
        const wc = await apply1(store, {
          kind: "wave",
          wave: "w1",
          token,
          from: "running",
          to: "stopped",
          reason: null,
        });
        assert.equal(!wc.ok && wc.reason, "conflict");
      }));

    test("one commit for many writes, each judged on its own", () =>
      withStore("wave-batch", async (store) => {
        await store.waves.create(def(), HOSTS);
        const token = await acquire(store);
        const rs = await store.waves.apply([
          hostWrite(token, { host: "a" }),
          hostWrite(token, { host: "b", from: "running" }),
          hostWrite(token, { host: "c", to: "skipped", reason: "held by backup" }),
          {
            kind: "wave",
            wave: "w1",
            token,
            from: "created",
            to: "running",
            reason: null,
            settings: '{"patch":"true"}',
            start: true,
          },
        ]);
        assert.deepEqual(
          rs.map((r) => r.ok),
          [true, false, true, true],
        );
        const states = Object.fromEntries(
          (await store.waves.listHosts("w1")).map((h) => [h.host, [h.state, h.reason]]),
        );
        assert.deepEqual(states, {
          a: ["running", null],
          b: ["pending", null],
          c: ["skipped", "held by backup"],
        });
        const { wave } = await store.waves.getWave("w1");
        assert.deepEqual(
          [wave!.state, wave!.token, wave!.settings],
          ["running", token, '{"patch":"true"}'],
        );
        assert.ok(wave!.startedAt !== null);
        // Settings are kept unless given; finish stamps finishedAt.
        const fin = await apply1(store, {
          kind: "wave",
          wave: "w1",
          token,
          from: "running",
          to: "completed",
          reason: "all done",
          finish: true,
        });
        assert.ok(fin.ok);
        const after = (await store.waves.getWave("w1")).wave!;
        assert.deepEqual(
          [after.state, after.reason, after.settings],
          ["completed", "all done", '{"patch":"true"}'],
        );
        assert.equal(after.finishedAt, fin.now);
      }));

    test("several hosts' writes with their events: each judged on its own, events in order, a zombie's batch changes nothing", () =>
      withStore("wave-host-batch", async (store) => {
        await store.waves.create(def(), HOSTS);
        const token = await acquire(store);
        const event = (host: string) => ({
          ...def().event,
          kind: EventKind.WaveHostChanged,
          token,
          message: `host ${host} -> skipped`,
          detail: { host },
        });
        const rs = await store.waves.apply([
          hostWrite(token, { host: "c", to: "skipped", reason: "busy", event: event("c") }),
          hostWrite(token, { host: "a", from: "running", to: "failed", event: event("a") }),
          hostWrite(token, {
            host: "b",
            to: "running",
            start: true,
            runId: "run-b",
            detail: '{"x":1}',
          }),
        ]);
        assert.deepEqual(
          rs.map((r) => [r.ok, r.ok ? null : r.reason]),
          [
            [true, null],
            [false, "conflict"],
            [true, null],
          ],
        );
        const hosts = new Map((await store.waves.listHosts("w1")).map((h) => [h.host, h]));
        assert.deepEqual(
          [...hosts.values()].map((h) => [h.host, h.state, h.reason, h.token]),
          [
            ["c", "skipped", "busy", token],
            ["a", "pending", null, null],
            ["b", "running", null, token],
          ],
        );
        const b = hosts.get("b")!;
        assert.deepEqual([b.attempts, b.runId, b.detail], [1, "run-b", '{"x":1}']);
        assert.equal(b.startedAt, rs[2]!.now);
        const ev = await store.events.list({ scope: SCOPE, kinds: [EventKind.WaveHostChanged] });
        assert.deepEqual(
          ev.map((e) => [e.message, e.detail]),
          [["host c -> skipped", { host: "c" }]],
        );

        // The lease moves on: the same kind of batch under the old token writes nothing.
        await store.leases.release({
          scope: SCOPE,
          token,
          runId: "r-a",
          host: "h",
          pid: 1,
          reason: "test",
        });
        const zs = await store.waves.apply([
          hostWrite(token, { host: "a", event: event("a") }),
          hostWrite(token, { host: "b", from: "running", to: "succeeded", event: event("b") }),
        ]);
        assert.deepEqual(
          zs.map((r) => !r.ok && r.reason),
          ["not_held", "not_held"],
        );
        assert.deepEqual(
          (await store.waves.listHosts("w1")).map((h) => h.state),
          ["skipped", "pending", "running"],
        );
        assert.equal(
          (await store.events.list({ scope: SCOPE, kinds: [EventKind.FencedWriteRejected] }))
            .length,
          2,
        );
        assert.equal(
          (await store.events.list({ scope: SCOPE, kinds: [EventKind.WaveHostChanged] })).length,
          1,
        );
      }));

    test("a host write may release the host's lease in its commit: only when the write goes through and the lease is current", () =>
      withStore("wave-release", async (store) => {
        await store.waves.create(def(), HOSTS);
        const token = await acquire(store);
        const hostLease = async (host: string) => acquire(store, 10_000, `host:${host}`);
        const [ta, tb, tc] = [await hostLease("a"), await hostLease("b"), await hostLease("c")];
        const release = (host: string, t: number) => ({
          scope: `host:${host}`,
          token: t,
          runId: "r-a",
          host: "test-host",
          pid: 4242,
          reason: "host done",
        });
        const rs = await store.waves.apply([
          hostWrite(token, { host: "a", release: release("a", ta) }),
          hostWrite(token, { host: "b", from: "failed", release: release("b", tb) }),
          hostWrite(token, { host: "c", release: release("c", tc + 5) }),
        ]);
        assert.deepEqual(
          rs.map((r) => r.ok),
          [true, false, true],
        );
        const held = async (host: string) =>
          (await store.leases.getLease(`host:${host}`)).lease !== null;
        const a = rs[0] as { released?: boolean };
        // A backend may not combine them (then the caller releases); PostgreSQL does.
        if (backend.name === "postgres") assert.equal(a.released, true);
        assert.equal(await held("a"), a.released !== true);
        const releasedEvents = await store.events.list({
          scope: "host:a",
          kinds: [EventKind.LeaseReleased],
        });
        assert.equal(releasedEvents.length, a.released === true ? 1 : 0);
        assert.equal(await held("b"), true, "a refused write releases nothing");
        assert.notEqual((rs[2] as { released?: boolean }).released, true);
        assert.equal(await held("c"), true, "a stale token releases nothing");
      }));

    test("an event given with a write is committed with it, and only if the write is", () =>
      withStore("wave-events", async (store) => {
        await store.waves.create(def(), HOSTS);
        const token = await acquire(store);
        const event = {
          ...def().event,
          kind: EventKind.WaveHostChanged,
          message: "host a -> running",
        };
        await store.waves.apply([
          hostWrite(token, { event }),
          hostWrite(token, { host: "b", from: "failed", event }),
        ]);
        const ev = await store.events.list({ scope: SCOPE, kinds: [EventKind.WaveHostChanged] });
        assert.equal(ev.length, 1);
      }));
  });
}
