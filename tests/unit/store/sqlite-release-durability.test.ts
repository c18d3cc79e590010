import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { describe, test } from "node:test";
import { Leases } from "../../../src/lease/leases.js";
import { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";
import { tempDir } from "../../support/paths.js";

const STORE_MODULE = new URL("../../../src/store/sqlite/sqlite-store.js", import.meta.url).href;
const LEASES_MODULE = new URL("../../../src/lease/leases.js", import.meta.url).href;

/**
 * A process that acquires `scope`, releases it, and is SIGKILLed by itself the moment
 * release() resolves: no close, no exit handlers, nothing flushed after. Resolves with the
 * token it held.
 */
async function releaseThenDie(path: string, scope: string): Promise<number> {
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { SqliteStore } from ${JSON.stringify(STORE_MODULE)};
       import { Leases } from ${JSON.stringify(LEASES_MODULE)};
       const leases = new Leases(new SqliteStore(${JSON.stringify(path)}), { takeover: { auto: false } });
       const lease = await leases.acquire(${JSON.stringify(scope)}, { ttl: "1h" });
       await lease.release("released, then killed");
       process.stdout.write(String(lease.token) + "\\n");
       process.kill(process.pid, "SIGKILL");`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += String(c)));
  const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
  assert.equal(signal, "SIGKILL", `the child ended by ${signal ?? `exit ${code}`}, not its kill`);
  return Number(out.trim());
}

describe("SQLite: a release survives its process's crash", () => {
  test("SIGKILL right after release() resolved: the scope is free and the token counter kept", async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const path = join(tmp.dir, "release.db");
    await new SqliteStore(path).close();
    const first = await releaseThenDie(path, "durable:release");
    const second = await releaseThenDie(path, "durable:release");
    assert.equal(second, first + 1, "each acquisition saw the release before it");

    const store = new SqliteStore(path);
    t.after(() => store.close());
    const { lease } = await store.leases.getLease("durable:release");
    assert.equal(lease, null, "the killed process's release is in the store");
    // Another process can take the scope at once, with a greater token (I2), no takeover.
    const leases = new Leases(store, { takeover: { auto: false } });
    const next = await leases.acquire("durable:release", { ttl: "10s" });
    assert.equal(next.token, second + 1);
    assert.equal(next.record.takeover ?? null, null, "acquired, not taken over");
    await next.release();
  });
});
