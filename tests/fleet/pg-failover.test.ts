import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { waitFor, type CliResult } from "../support/cli.js";
import { fleetSkip, makeFleet, type Fleet } from "../support/fleet/fleet.js";
import { STORE_ADDRESS, SUBNET } from "../support/fleet/names.js";
import { explain } from "../support/fleet/scenario.js";
import { makePrivatePg, makePrivateStandby, type PrivatePg } from "../support/private-pg.js";

/**
 * Scenario 5 of the fleet: the store's PostgreSQL fails over to a streaming standby (the
 * primary crashes, the standby is promoted, the agents use it). With an asynchronous standby a
 * fencing token the old primary acknowledged is lost and handed out again (I2 broken by the
 * database, not by quiesce), and `store info` and `check` say so beforehand; with a synchronous
 * standby (`synchronous_standby_names`, `synchronous_commit = on`) an acknowledgement waits for
 * the standby, so nothing acknowledged is lost and tokens never go back.
 *
 * The standby is cut off (stopped) before the decisive write, so the write surely never reached
 * it: that is the window a real asynchronous standby's lag opens.
 */
const skip = fleetSkip();

async function sql(url: string, text: string): Promise<pg.QueryResultRow[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<pg.QueryResultRow>(text)).rows;
  } finally {
    await c.end();
  }
}

describe("fleet: PostgreSQL fails over to a standby", { skip }, () => {
  let fleet: Fleet;
  const clusters: PrivatePg[] = [];
  before(async () => {
    fleet = await makeFleet();
  });
  after(() => {
    for (const c of clusters) c.destroy();
    fleet?.destroy();
  });

  const storeOf = (c: PrivatePg) => `${c.url}?schema=failover`;
  /** A quiesce command on ctl-a against `c`. */
  const on = (c: PrivatePg, ...args: string[]): Promise<CliResult> =>
    fleet.startOn("ctl-a", [...args, "--store", storeOf(c)]).done;
  /** Acquires host:t1, releases it, and returns the token quiesce acknowledged. */
  async function acquireAndRelease(c: PrivatePg): Promise<number> {
    const r = await on(c, "lock", "acquire", "host:t1", "--ttl", "1m");
    assert.equal(r.code, 0, explain(r));
    const token = Number(r.stdout.trim());
    const rel = await on(c, "lock", "release", "host:t1", "--token", String(token));
    assert.equal(rel.code, 0, explain(rel));
    return token;
  }

  /** A primary and its standby `name`, streaming; the primary names `syncNames`. */
  async function pair(syncNames: string) {
    const primary = await makePrivatePg({
      host: STORE_ADDRESS,
      allow: SUBNET,
      conf: [`synchronous_standby_names = '${syncNames}'`, "synchronous_commit = on"],
    });
    clusters.push(primary);
    const standby = await makePrivateStandby(primary, "qf_standby");
    clusters.push(standby);
    const state = syncNames === "" ? "async" : "sync";
    await waitFor(`the standby to stream (${state})`, async () =>
      (await sql(primary.url, "SELECT sync_state FROM pg_stat_replication")).some(
        (r) => r.sync_state === state,
      ),
    );
    const migrate = await on(primary, "store", "migrate");
    assert.equal(migrate.code, 0, explain(migrate));
    return { primary, standby };
  }

  /** The primary crashes; the standby, which may have missed writes, is promoted. */
  function failOver(primary: PrivatePg, standby: PrivatePg): void {
    primary.stop("immediate");
    standby.start();
    standby.promote();
  }

  test("asynchronous standby: check warns beforehand; after the failover an acknowledged token is handed out again", async () => {
    const { primary, standby } = await pair("");
    const info = await on(primary, "store", "info");
    assert.match(info.stdout, /replication\s+asynchronous \(qf_standby async\)/, explain(info));
    const check = await on(primary, "check");
    assert.equal(check.code, 1, explain(check));
    assert.match(check.stdout, /fencing tokens could go back after a failover/);

    assert.equal(await acquireAndRelease(primary), 1);
    standby.stop("fast"); // the standby falls behind
    const acknowledged = await acquireAndRelease(primary);
    assert.equal(acknowledged, 2);
    failOver(primary, standby);
    const after = await acquireAndRelease(standby);
    assert.equal(after, acknowledged, "the promoted standby hands token 2 out a second time");
  });

  test("synchronous standby: check is OK; an acknowledgement waits for the standby, and no token goes back", async () => {
    const { primary, standby } = await pair("qf_standby");
    const info = await on(primary, "store", "info");
    assert.match(info.stdout, /replication\s+synchronous \(qf_standby sync/, explain(info));
    const check = await on(primary, "check");
    assert.equal(check.code, 0, explain(check));

    const acknowledged = [await acquireAndRelease(primary)];
    standby.stop("fast");
    // With its synchronous standby gone, the primary commits the next grant but does not
    // acknowledge it: quiesce prints no token.
    const pending = fleet.startOn("ctl-a", [
      ...["lock", "acquire", "host:t1", "--ttl", "1m", "--store", storeOf(primary)],
    ]);
    await waitFor("the grant to wait for the standby", async () =>
      (await sql(primary.url, "SELECT wait_event FROM pg_stat_activity")).some(
        (r) => r.wait_event === "SyncRep",
      ),
    );
    process.kill(pending.pid, "SIGKILL");
    const unacknowledged = await pending.done;
    assert.equal(unacknowledged.stdout, "", "no token was acknowledged");

    failOver(primary, standby);
    const next = await acquireAndRelease(standby);
    assert.ok(
      acknowledged.every((t) => next > t),
      `token ${next} after the failover; acknowledged before: ${acknowledged.join(", ")}`,
    );
  });
});
