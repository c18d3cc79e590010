import { invalidInput } from "../domain/errors.js";
import { EventKind } from "../domain/event.js";
import {
  parseBatch,
  parseFailureBudget,
  parseHostsFile,
  specText,
  validateWaveName,
  waveScope,
  type HostEntry,
} from "../domain/wave-input.js";
import { parseWindow } from "../domain/wave-window.js";
import { hostIdentity } from "../process/process-identity.js";
import type { Store } from "../store/store.js";
import type { WaveDefinition, WaveHostInput } from "../store/wave-store.js";

export interface CreateWaveInput {
  name: string;
  /** The hosts file's text (one host a line, optional `group=NAME`), or the parsed hosts. */
  hosts: string | readonly HostEntry[];
  /** Where the hosts came from, for messages ("hosts.txt", "stdin"). */
  hostsSource?: string;
  /** `5` or `10%`; default 1 host per batch. */
  batch?: string | number;
  /** `0`, `3` or `5%` of the wave; default 0 (stop at the first failure). */
  maxFailures?: string | number;
  /** `Sat 02:00-06:00`: hosts start only inside it. */
  window?: string | null;
  /** At most this many hosts of one group in maintenance at once. */
  maxPerGroup?: number | null;
}

export interface PreparedWave {
  def: WaveDefinition;
  hosts: WaveHostInput[];
}

/**
 * Checks everything `wave create` is given, before the store is touched: a bad hosts file,
 * batch, budget or window is one sentence (INVALID_INPUT) and nothing is written.
 */
export function prepareWave(i: CreateWaveInput): PreparedWave {
  const name = validateWaveName(i.name);
  const text =
    typeof i.hosts === "string"
      ? i.hosts
      : i.hosts.map((h) => `${h.host}${h.group ? ` group=${h.group}` : ""}`).join("\n");
  const hosts = parseHostsFile(text, name, i.hostsSource ?? "hosts file");
  const batch = parseBatch(String(i.batch ?? "1"), hosts.length);
  const budget = parseFailureBudget(String(i.maxFailures ?? "0"), hosts.length);
  const window = i.window === undefined || i.window === null ? null : parseWindow(i.window);
  const maxPerGroup = i.maxPerGroup ?? null;
  if (maxPerGroup !== null && (!Number.isInteger(maxPerGroup) || maxPerGroup < 1))
    throw invalidInput(`--max-per-group: ${maxPerGroup} is not a positive whole number`);
  const who = hostIdentity().host;
  const groups = new Set(hosts.map((h) => h.group).filter((g) => g !== null)).size;
  return {
    def: {
      name,
      batchSpec: specText(batch.spec),
      batchSize: batch.size,
      failureSpec: specText(budget.spec),
      maxFailures: budget.max,
      window: window?.text ?? null,
      maxPerGroup,
      event: {
        kind: EventKind.WaveCreated,
        scope: waveScope(name),
        token: null,
        runId: null,
        host: who,
        pid: process.pid,
        message: `wave ${name} created: ${hosts.length} host(s)${groups ? ` in ${groups} group(s)` : ""}, batches of ${batch.size}, at most ${budget.max} failure(s)${window ? `, window ${window.text}` : ""}${maxPerGroup !== null ? `, at most ${maxPerGroup} per group at once` : ""}`,
        detail: {
          hosts: hosts.length,
          batch: specText(batch.spec),
          batchSize: batch.size,
          maxFailures: budget.max,
          window: window?.text ?? null,
          maxPerGroup,
        },
      },
    },
    hosts,
  };
}

/** Creates the wave (every host pending). A wave of that name already existing is refused. */
export async function createWave(store: Store, i: CreateWaveInput | PreparedWave) {
  const p = "def" in i ? i : prepareWave(i);
  const r = await store.waves.create(p.def, p.hosts);
  if (!r.ok)
    throw invalidInput(
      `a wave named ${p.def.name} already exists (quiesce wave status ${p.def.name}); pick another name`,
    );
  const { wave } = await store.waves.getWave(p.def.name);
  return wave!;
}
