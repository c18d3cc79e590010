/**
 * proper-lockfile as the baseline: `hold FILE STALE_MS` locks and keeps the lock fresh until
 * SIGKILLed; `wait FILE STALE_MS POLL_MS` retries until it gets the lock and prints when.
 * proper-lockfile treats a lock whose mtime is older than `stale` as abandoned: no proof of death.
 */
import lockfile from "proper-lockfile";

const [mode, file, staleArg, pollArg] = process.argv.slice(2) as [string, string, string, string?];
const stale = Number(staleArg);
if (mode === "hold") {
  await lockfile.lock(file, {
    stale,
    update: Math.max(1000, Math.floor(stale / 2)),
    realpath: false,
  });
  process.stdout.write("ready\n");
  setInterval(() => undefined, 1 << 30);
} else {
  const poll = Number(pollArg ?? 50);
  process.stdout.write("waiting\n");
  const release = await lockfile.lock(file, {
    stale,
    realpath: false,
    retries: { retries: 100_000, factor: 1, minTimeout: poll, maxTimeout: poll },
  });
  process.stdout.write(JSON.stringify({ gotAt: Date.now() }) + "\n");
  await release();
}
