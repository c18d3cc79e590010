import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, waitFor, type CliResult } from "../cli.js";
import { TARGET_HOSTS, type ControlHost, type TargetHost } from "./names.js";
import type { Fleet } from "./fleet.js";
import { readRecord, type TargetVerdict } from "./targets.js";

/** What every scenario shares: creating a wave over the targets, the agents' flags, verdicts. */

/** Creates wave NAME over `hosts` (default: every target) in batches of `batch`. */
export async function createFleetWave(
  fleet: Fleet,
  name: string,
  batch: number,
  hosts: readonly TargetHost[] = TARGET_HOSTS,
): Promise<void> {
  const file = join(fleet.root, `hosts-${name}`);
  writeFileSync(file, hosts.join("\n") + "\n");
  const r = await cli([
    ...["wave", "create", name, "--hosts", file, "--batch", String(batch)],
    ...["--store", fleet.storeUrl],
  ]);
  assert.equal(r.code, 0, r.stderr);
}

/**
 * `wave run NAME` as a replica on `host` runs it: patch, check and (unless `probe: false`)
 * the proof-of-death probe over ssh.
 */
export function waveRunArgs(
  fleet: Fleet,
  name: string,
  host: ControlHost,
  extra: readonly string[] = [],
  o: { probe?: boolean } = {},
): string[] {
  return [
    ...["wave", "run", name, "--patch", fleet.patchCommand(), "--check", fleet.checkCommand],
    ...(o.probe === false ? [] : ["--probe", fleet.probeCommand]),
    ...["--log-dir", join(fleet.root, "logs", host)],
    ...["--store", fleet.storeUrl, ...extra],
  ];
}

/** Resolves once some target's own record shows a patch of `host` under way. */
export function waitForPatchStart(fleet: Fleet, host: TargetHost) {
  return waitFor(
    `a patch of ${host} to start`,
    () => readRecord(fleet.recordOf(host)).length > 0,
    60_000,
  );
}

function describeVerdict(v: TargetVerdict): string {
  return `${v.host}: ${v.patches.map((p) => `[${p.token} ${p.start}-${p.end ?? "running"}]`).join(" ")}`;
}

/**
 * The targets' own verdict: each was patched exactly once, the patch finished, it ran where it
 * was meant to, and no two patches of one host overlapped.
 */
export function assertEveryTargetPatchedOnce(
  fleet: Fleet,
  hosts: readonly TargetHost[] = TARGET_HOSTS,
): TargetVerdict[] {
  const verdicts = fleet.judge().filter((v) => hosts.includes(v.host));
  const all = verdicts.map(describeVerdict).join("\n");
  for (const v of verdicts) {
    assert.deepEqual(v.overlaps, [], `two patches of ${v.host} overlapped:\n${all}`);
    assert.deepEqual(v.misdirected, [], `a patch reached the wrong host:\n${all}`);
    assert.equal(v.started, 1, `${v.host} patched ${v.started} times:\n${all}`);
    assert.equal(v.finished, 1, `${v.host}'s patch did not finish:\n${all}`);
  }
  return verdicts;
}

export function explain(r: CliResult): string {
  return `exit ${r.code} ${r.signal ?? ""}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}
