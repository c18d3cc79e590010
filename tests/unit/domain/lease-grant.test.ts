import assert from "node:assert/strict";
import { test } from "node:test";
import { grantedMessage, grantedStart, handBackReason } from "../../../src/domain/lease-grant.js";

test("a granted lease's window starts as long before the read as the grant was old then", () => {
  const sent = { mono: 10_000, wall: 1_700_000_000_000 };
  // The read saw the store's clock 250 ms past the grant: the window starts 250 ms before it.
  assert.deepEqual(grantedStart(sent, 5_250, 5_000), { mono: 9_750, wall: 1_699_999_999_750 });
});

test("a grant stamped after the store's now (clock granularity) never moves the window later", () => {
  const sent = { mono: 10_000, wall: 20_000 };
  assert.deepEqual(grantedStart(sent, 4_999, 5_000), sent);
});

test("the grant's messages name the tokens and the ticket", () => {
  assert.equal(
    grantedMessage(8, 30_000, 7),
    "acquired with token 8 for 30s (handed over by the release of token 7)",
  );
  assert.equal(handBackReason(41), "granted to ticket 41 after its waiter had stopped waiting");
});
