import { formatDuration } from "./duration.js";
import { describeOwner, type LeaseRecord } from "./lease.js";

/** Why a write or release under `token` was refused (I3). */
export type FenceFailure = "not_held" | "token_mismatch" | "expired";

/**
 * A write under a lease is allowed only while that exact token is held and unexpired on the
 * store's clock. This is the rule every backend's SQL encodes in its WHERE clause; this pure
 * version names the reason when the SQL said no.
 */
export function fenceFailure(
  current: LeaseRecord | null,
  token: number,
  storeNow: number,
): FenceFailure | null {
  if (current === null) return "not_held";
  if (current.token !== token) return "token_mismatch";
  if (current.expiresAt <= storeNow) return "expired";
  return null;
}

export function describeFenceFailure(
  scope: string,
  token: number,
  reason: FenceFailure,
  current: LeaseRecord | null,
  storeNow: number,
): string {
  switch (reason) {
    case "not_held":
      return `the lease on ${scope} with token ${token} is no longer held (it was released)`;
    case "token_mismatch":
      return current
        ? `the lease on ${scope} with token ${token} was superseded: token ${current.token} is held by ${describeOwner(current.owner)}`
        : `the lease on ${scope} with token ${token} was superseded`;
    case "expired":
      return `the lease on ${scope} with token ${token} expired ${formatDuration(storeNow - (current?.expiresAt ?? storeNow))} ago`;
  }
}
