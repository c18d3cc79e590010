import { ErrorCode, QuiesceError, invalidInput } from "../domain/errors.js";
import { EventKind, type EventInput } from "../domain/event.js";
import { describeOwner } from "../domain/lease.js";
import { validateWaveName, waveScope } from "../domain/wave-input.js";
import { HostState } from "../domain/wave-state.js";
import { hostIdentity } from "../process/process-identity.js";
import type { Store } from "../store/store.js";
import type { WaveAdminOutcome } from "../store/wave-store.js";

export interface RetryWaveInput {
  wave: string;
  /** `failed`: every failed host; else these hosts, each of which must have failed. */
  hosts: "failed" | readonly string[];
  /** Who asked (recorded in the event). */
  by: string;
}

export interface RetryWaveResult {
  wave: string;
  /** The hosts put back to pending (empty: the wave had no failed host). */
  retried: string[];
  message: string;
}

/**
 * `quiesce wave retry NAME [--hosts failed|HOST...]`: puts failed hosts back to `pending`
 * (their journal runs are dropped, so the next `wave run` patches them afresh), recorded as a
 * `wave.retried` event. Refused with LEASE_HELD while an agent holds the wave's lease: a
 * running agent's view of its hosts must not change under it.
 */
export async function retryWave(store: Store, i: RetryWaveInput): Promise<RetryWaveResult> {
  validateWaveName(i.wave);
  const { wave } = await store.waves.getWave(i.wave);
  if (!wave) throw invalidInput(`no wave named ${i.wave} (quiesce wave status lists the waves)`);
  const hosts = await store.waves.listHosts(i.wave);
  let chosen: string[];
  if (i.hosts === "failed") {
    chosen = hosts.filter((h) => h.state === HostState.FAILED).map((h) => h.host);
  } else {
    const byName = new Map(hosts.map((h) => [h.host, h]));
    for (const name of i.hosts) {
      const h = byName.get(name);
      if (!h) throw invalidInput(`wave ${i.wave} has no host ${name}`);
      if (h.state !== HostState.FAILED)
        throw invalidInput(
          `host ${name} of wave ${i.wave} is ${h.state}, not failed: only failed hosts are retried`,
        );
    }
    chosen = [...new Set(i.hosts)];
  }
  if (chosen.length === 0)
    return {
      wave: i.wave,
      retried: [],
      message: `wave ${i.wave} has no failed host: nothing to retry`,
    };
  const event = adminEvent(
    EventKind.WaveRetried,
    i.wave,
    `wave ${i.wave}: failed host(s) put back to pending by ${i.by}`,
    { by: i.by },
  );
  const r = await store.waves.retryHosts(i.wave, chosen, event);
  refuseUnlessOk(r, i.wave, "retry its hosts");
  return {
    wave: i.wave,
    retried: r.ok ? r.hosts : [],
    message:
      r.ok && r.hosts.length > 0
        ? `wave ${i.wave}: ${r.hosts.length} host(s) put back to pending (${r.hosts.join(", ")}); quiesce wave run ${i.wave} patches them`
        : `wave ${i.wave}: no host was failed any more: nothing retried`,
  };
}

/** `quiesce wave delete NAME`: the wave, its hosts and their journal runs. Refused while an
 * agent runs it (LEASE_HELD). */
export async function deleteWave(
  store: Store,
  i: { wave: string; by: string },
): Promise<{ wave: string; message: string }> {
  validateWaveName(i.wave);
  const event = adminEvent(EventKind.WaveDeleted, i.wave, `wave ${i.wave} deleted by ${i.by}`, {
    by: i.by,
  });
  const r = await store.waves.deleteWave(i.wave, event);
  refuseUnlessOk(r, i.wave, "delete it");
  return { wave: i.wave, message: `wave ${i.wave} deleted with its hosts and their journal runs` };
}

function refuseUnlessOk(r: WaveAdminOutcome, wave: string, doing: string): void {
  if (r.ok) return;
  if (r.reason === "missing")
    throw invalidInput(`no wave named ${wave} (quiesce wave status lists the waves)`);
  const who = r.holder ? describeOwner(r.holder.owner) : "an agent";
  throw new QuiesceError(
    ErrorCode.LEASE_HELD,
    `wave ${wave} is being run by an agent (${who}, token ${r.holder?.token ?? "?"}): stop it first (quiesce wave stop ${wave} --wait), then ${doing}`,
    { details: { wave, holder: r.holder } },
  );
}

function adminEvent(
  kind: EventKind,
  wave: string,
  message: string,
  detail: Record<string, unknown>,
): EventInput {
  return {
    kind,
    scope: waveScope(wave),
    token: null,
    runId: null,
    host: hostIdentity().host,
    pid: process.pid,
    message,
    detail,
  };
}
