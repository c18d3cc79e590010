/**
 * Baselines measured in the same run as the waves, each in a process of its own:
 *
 *   spawn  --n N --concurrency C [--ballast-mb M]
 *                                  the patch command's own cost: `/bin/sh -c true` started in a
 *                                  process group of its own and waited for, C at a time, through
 *                                  the very function the wave uses (runShell), nothing else, from
 *                                  a process holding M MB more (a fork costs more from a bigger
 *                                  parent: the agent's size makes the comparison fair).
 *   status --store URL --wave W    `waveStatus()` on a wave, timed over several calls.
 */
import { performance } from "node:perf_hooks";
import { openStore } from "../../src/store/open-store.js";
import { waveStatus } from "../../src/wave/wave-status.js";
import { runShell } from "../../src/wave/shell-command.js";

const argv = process.argv.slice(2);
const flag = (name: string) => {
  const i = argv.indexOf(name);
  return i === -1 ? undefined : argv[i + 1];
};

async function spawnBaseline(n: number, concurrency: number, ballastMb: number) {
  // Forking costs more the more memory the parent maps: give this process the agent's size.
  const ballast = Array.from({ length: ballastMb }, () => Buffer.alloc(1 << 20, 1));
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        const e = await runShell({
          command: "true",
          env: process.env,
          outputFd: null,
          signal: new AbortController().signal,
          graceMs: 1000,
        });
        if (e.exitCode !== 0) throw new Error("true failed");
      }
    }),
  );
  const ms = performance.now() - t;
  return {
    n,
    concurrency,
    ms,
    perSpawnMs: ms / n,
    ballastMb: ballast.length,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
  };
}

async function statusTimes(url: string, wave: string, rounds: number) {
  const store = await openStore(url);
  try {
    const first = performance.now();
    const s = await waveStatus(store, wave);
    const coldMs = performance.now() - first;
    const times: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const t = performance.now();
      await waveStatus(store, wave);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    return {
      hosts: s.hosts.length,
      coldMs,
      medianMs: times[Math.floor(times.length / 2)]!,
      p95Ms: times[Math.min(times.length - 1, Math.floor(times.length * 0.95))]!,
      maxRssMb: process.resourceUsage().maxRSS / 1024,
    };
  } finally {
    await store.close();
  }
}

const mode = argv[0];
const out =
  mode === "spawn"
    ? await spawnBaseline(
        Number(flag("--n") ?? 10_000),
        Number(flag("--concurrency") ?? 32),
        Number(flag("--ballast-mb") ?? 0),
      )
    : await statusTimes(flag("--store")!, flag("--wave")!, Number(flag("--rounds") ?? 15));
process.stdout.write(JSON.stringify(out) + "\n");
