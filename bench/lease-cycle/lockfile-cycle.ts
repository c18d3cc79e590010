import { writeFileSync } from "node:fs";
import { join } from "node:path";
import lockfile from "proper-lockfile";

/**
 * The peer-library baseline: proper-lockfile's lock + unlock of a file on the same disk
 * (mkdir/rmdir of `<file>.lock`, no fsync: fast, but neither durable nor fenced).
 */
export function lockfileCycle(dir: string): () => Promise<void> {
  const file = join(dir, "proper-lockfile.target");
  writeFileSync(file, "");
  return async () => {
    const release = await lockfile.lock(file, { realpath: false, retries: 0 });
    await release();
  };
}
