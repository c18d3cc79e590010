import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { leaseTiming } from "../../../src/domain/lease.js";
import { readClock } from "../../../src/process/clock.js";
import { HeartbeatKeeper } from "../../../src/lease/heartbeat-keeper.js";
import { Lease } from "../../../src/lease/lease.js";
import { record, ScriptedStore } from "./fake-store.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The keeper's timers are unref'd (they must not keep a process alive), so the test keeps
 * the event loop open itself while it waits, and gives up after `maxMs`. */
function aborted(signal: AbortSignal, maxMs = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`not aborted within ${maxMs} ms`)), maxMs);
    signal.addEventListener("abort", () => (clearTimeout(guard), resolve()), { once: true });
  });
}

function setup(n: number, ttlMs: number, heartbeatMs?: number) {
  const fake = new ScriptedStore();
  const store = fake.asStore();
  const keeper = new HeartbeatKeeper(store);
  const timing = leaseTiming(ttlMs, heartbeatMs);
  const leases = Array.from(
    { length: n },
    (_, i) => new Lease(store, record(`s${i}`), timing, readClock()),
  );
  for (const l of leases) keeper.track(l);
  return { fake, keeper, leases };
}

describe("HeartbeatKeeper", () => {
  test("renews every lease of the process in one call per tick", async () => {
    const { fake, keeper, leases } = setup(50, 600, 100);
    await sleep(450);
    keeper.stop();
    assert.ok(fake.calls.length >= 3, `${fake.calls.length} ticks`);
    for (const call of fake.calls)
      assert.equal(call.length, 50, "one statement carries all 50 leases");
    for (const l of leases) assert.equal(l.lost, false);
  });

  test("leases taken at different moments fall into the same batch", async () => {
    const fake = new ScriptedStore();
    const store = fake.asStore();
    const keeper = new HeartbeatKeeper(store);
    const timing = leaseTiming(2000, 200);
    const a = new Lease(store, record("a"), timing, readClock());
    keeper.track(a);
    await sleep(60);
    const b = new Lease(store, record("b"), timing, readClock());
    keeper.track(b);
    await sleep(700);
    keeper.stop();
    const later = fake.calls.slice(1);
    assert.ok(later.length >= 2);
    for (const call of later) assert.deepEqual(call.map((i) => i.scope).sort(), ["a", "b"]);
  });

  test("renewals never overlap, even when the store is slower than the heartbeat", async () => {
    const { fake, keeper } = setup(3, 2000, 50);
    fake.delayMs = 200;
    await sleep(900);
    keeper.stop();
    assert.ok(fake.calls.length >= 3);
    assert.equal(fake.maxInFlight, 1);
  });

  test("a refused renewal loses the lease: its signal fires with LEASE_LOST and a lease.lost event", async () => {
    const { fake, keeper, leases } = setup(2, 1000, 100);
    fake.mode = "refuse";
    const lease = leases[0]!;
    await aborted(lease.signal);
    keeper.stop();
    assert.equal((lease.signal.reason as { code: string }).code, "LEASE_LOST");
    assert.match(lease.lostReason!, /refused the renewal/);
    assert.equal(lease.remainingMs(), 0);
    assert.throws(() => lease.assertHeld(), /was lost/);
    assert.equal(keeper.size, 0, "lost leases are no longer renewed");
    assert.ok(fake.recorded.some((e) => e.kind === "lease.lost" && e.scope === "s0"));
  });

  test("a renewal that hangs cannot delay self-fencing: the deadline fires on time (I4)", async () => {
    const { fake, keeper, leases } = setup(1, 500, 100);
    fake.mode = "hang";
    const lease = leases[0]!;
    const t0 = readClock().mono;
    const budget = lease.timing.ttlMs - lease.timing.safetyMarginMs;
    await aborted(lease.signal);
    const elapsed = readClock().mono - t0;
    keeper.stop();
    assert.ok(
      elapsed >= budget - 5,
      `lost after ${elapsed} ms, not before the ${budget} ms budget`,
    );
    assert.ok(
      elapsed < budget + 250,
      `lost after ${elapsed} ms, soon after the ${budget} ms budget`,
    );
    assert.match(lease.lostReason!, /no successful renewal within/);
    assert.match(
      lease.lostReason!,
      /a renewal sent \d[\d.]*(ms|s) ago had no answer from the store yet/,
    );
    assert.equal(fake.calls.length, 1, "no second renewal while the first is in flight");
  });

  test("a short outage is retried quickly and survived; the recovery is logged", async () => {
    const { fake, keeper, leases } = setup(1, 1000, 200);
    await sleep(250);
    fake.mode = "fail";
    await sleep(300);
    fake.mode = "ok";
    await sleep(250);
    keeper.stop();
    assert.equal(leases[0]!.lost, false);
    const failedCalls = fake.calls.length;
    assert.ok(failedCalls >= 4, `retried during the outage (${failedCalls} calls)`);
    const recovered = fake.recorded.filter((e) => e.kind === "lease.renew_failed");
    assert.equal(recovered.length, 1);
    assert.match(
      recovered[0]!.message,
      /renewal attempt\(s\) failed over \d[\d.]*(ms|s) before one succeeded/,
    );
  });

  test("an outage longer than the budget loses the lease even though retries continue", async () => {
    const { fake, keeper, leases } = setup(1, 400, 100);
    fake.mode = "fail";
    await sleep(500);
    keeper.stop();
    assert.equal(leases[0]!.lost, true);
    assert.match(leases[0]!.lostReason!, /\d+ renewal attempt\(s\) failed, the last: /);
  });

  test("a lease lost because the process never ran its timers says so, not that the store was slow", async () => {
    const { keeper, leases } = setup(1, 300, 100);
    const lease = leases[0]!;
    // Hold the event loop past the whole budget: the renewal timer cannot fire.
    const until = readClock().mono + 400;
    while (readClock().mono < until) {
      /* a synchronous stretch, as a starved or blocked process has */
    }
    await aborted(lease.signal);
    keeper.stop();
    assert.match(
      lease.lostReason!,
      /the next renewal was due \d[\d.]*(ms|s) ago and had not started \(the keeper last ran never: the process did not get to its timers\)/,
    );
  });

  test("a process that was paused past its deadline finds the lease lost on the spot", () => {
    const fake = new ScriptedStore();
    const timing = leaseTiming(1000);
    const past = readClock();
    const lease = new Lease(fake.asStore(), record("s"), timing, {
      mono: past.mono - 2000,
      wall: past.wall - 2000,
    });
    assert.equal(lease.remainingMs(), 0);
    assert.equal(lease.lost, true);
    assert.equal(lease.signal.aborted, true);
  });

  test("a wall clock that jumped (machine suspended) past the deadline counts as lost", () => {
    const fake = new ScriptedStore();
    const timing = leaseTiming(1000);
    const now = readClock();
    const lease = new Lease(fake.asStore(), record("s"), timing, {
      mono: now.mono,
      wall: now.wall - 5000,
    });
    assert.equal(lease.lost, true);
  });

  test("many leases lost at once (event loop blocked) leave one renewal timer, not one per loss", async () => {
    // A census of the timers the keeper creates: it must never hold more than its two.
    const realSet = globalThis.setTimeout;
    const realClear = globalThis.clearTimeout;
    const live = new Set<unknown>();
    globalThis.setTimeout = ((fn: () => void, ms?: number) => {
      const t: NodeJS.Timeout = realSet(() => {
        live.delete(t);
        fn();
      }, ms);
      live.add(t);
      return t;
    }) as typeof setTimeout;
    globalThis.clearTimeout = ((t: NodeJS.Timeout) => {
      live.delete(t);
      realClear(t);
    }) as typeof clearTimeout;
    const pause = (ms: number) => new Promise((r) => realSet(r, ms));
    const fake = new ScriptedStore();
    const store = fake.asStore();
    const keeper = new HeartbeatKeeper(store);
    try {
      const healthy = leaseTiming(10_000, 200);
      const fragile = leaseTiming(300, 100);
      const now = readClock();
      for (let i = 0; i < 50; i++) keeper.track(new Lease(store, record(`h${i}`), healthy, now));
      for (let i = 0; i < 200; i++) keeper.track(new Lease(store, record(`f${i}`), fragile, now));
      const end = Date.now() + 500;
      while (Date.now() < end) {
        /* block the event loop past the fragile leases' deadline */
      }
      let most = 0;
      for (let i = 0; i < 20; i++) {
        await pause(50);
        most = Math.max(most, live.size);
      }
      assert.ok(most <= 2, `at most the renewal and the deadline timer are pending (saw ${most})`);
      assert.equal(keeper.size, 50, "the 200 fragile leases were lost, the 50 healthy kept");
    } finally {
      keeper.stop();
      globalThis.setTimeout = realSet;
      globalThis.clearTimeout = realClear;
    }
  });

  test("20,000 leases past their deadline at once do not overflow the stack", async () => {
    const fake = new ScriptedStore();
    const store = fake.asStore();
    const keeper = new HeartbeatKeeper(store);
    const timing = leaseTiming(200, 50);
    const now = readClock();
    const leases = Array.from(
      { length: 20_000 },
      (_, i) => new Lease(store, record(`s${i}`), timing, now),
    );
    for (const l of leases) keeper.track(l);
    const end = Date.now() + 400;
    while (Date.now() < end) {
      /* block */
    }
    await sleep(100);
    keeper.stop();
    assert.equal(leases.filter((l) => l.signal.aborted).length, 20_000);
  });

  test("tracking new leases continuously does not postpone the renewal of the old ones", async () => {
    const fake = new ScriptedStore();
    const store = fake.asStore();
    const keeper = new HeartbeatKeeper(store);
    const timing = leaseTiming(2000, 200);
    const first = new Lease(store, record("first"), timing, readClock());
    keeper.track(first);
    const until = Date.now() + 700;
    let n = 0;
    while (Date.now() < until) {
      keeper.track(new Lease(store, record(`n${n++}`), timing, readClock()));
      await new Promise((r) => setImmediate(r));
    }
    keeper.stop();
    const renewedFirst = fake.calls.filter((c) => c.some((i) => i.scope === "first")).length;
    assert.ok(
      renewedFirst >= 2,
      `"first" renewed ${renewedFirst} times in 700 ms at a 200 ms heartbeat (${n} leases tracked meanwhile)`,
    );
  });

  test("stop() is idempotent and ends all timers", async () => {
    const { fake, keeper } = setup(1, 1000, 100);
    keeper.stop();
    keeper.stop();
    const calls = fake.calls.length;
    await sleep(300);
    assert.equal(fake.calls.length, calls);
  });
});

describe("HeartbeatKeeper: a resume from suspend", () => {
  test("a wall clock that jumped past the deadline while the monotonic one stood still loses the lease at the next clock tick, not at the deadline timer", () => {
    const fake = new ScriptedStore();
    const store = fake.asStore();
    let jump = 0;
    // The monotonic clock does not count a suspend; the wall clock does.
    const clock = () => {
      const r = readClock();
      return { mono: r.mono, wall: r.wall + jump };
    };
    const keeper = new HeartbeatKeeper(store, {}, clock);
    const timing = leaseTiming(30_000);
    const lease = new Lease(store, record("s"), timing, clock());
    keeper.track(lease);
    keeper.onClockTick();
    assert.equal(lease.signal.aborted, false, "no jump, nothing lost");
    jump = 60_000; // a 60 s suspend: twice the TTL
    keeper.onClockTick();
    assert.equal(lease.signal.aborted, true, "the jump is noticed on the tick");
    assert.match(lease.lostReason ?? "", /no successful renewal/);
    assert.match(lease.lostReason ?? "", /the wall clock moved 1m00s ahead of the monotonic one/);
    keeper.stop();
  });

  test("a small jump (NTP slew) within the deadline loses nothing", () => {
    const fake = new ScriptedStore();
    const store = fake.asStore();
    let jump = 0;
    const clock = () => {
      const r = readClock();
      return { mono: r.mono, wall: r.wall + jump };
    };
    const keeper = new HeartbeatKeeper(store, {}, clock);
    const lease = new Lease(store, record("s"), leaseTiming(30_000), clock());
    keeper.track(lease);
    keeper.onClockTick();
    jump = 500;
    keeper.onClockTick();
    assert.equal(lease.signal.aborted, false);
    keeper.stop();
  });
});
