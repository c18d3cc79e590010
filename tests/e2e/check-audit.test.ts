import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { cli } from "../support/cli.js";
import { eachBackend, withLocation } from "../support/e2e.js";
import { tempDir } from "../support/paths.js";

const deadPid = () =>
  Number(spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim());

function lockTree() {
  const t = tempDir("quiesce-check-audit-");
  after(t.cleanup);
  writeFileSync(join(t.dir, "backup.lock"), `${deadPid()}\n`);
  writeFileSync(join(t.dir, "maintenance"), "");
  writeFileSync(join(t.dir, "agent.pid"), `${process.pid}\n`); // live: the test runner
  return t.dir;
}

await eachBackend("check --audit", (b) => {
  test("stale and unknown legacy locks are WARNINGs; accepted and live ones are not; json carries them", () =>
    withLocation(b, "check-audit", async (url) => {
      const dir = lockTree();
      const made = await cli(["store", "migrate", "--store", url]); // check never creates a store
      assert.equal(made.code, 0, made.stderr);
      const plain = await cli(["check", "--store", url]);
      assert.equal(plain.code, 0, plain.stdout + plain.stderr);

      const config = join(dir, "q.yaml");
      writeFileSync(
        config,
        `audit:\n  accept:\n    - { path: ${join(dir, "maintenance")}, reason: the CMS flag }\n`,
      );
      const r = await cli(["check", "--store", url, "--config", config, "--audit", dir]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /^QUIESCE WARNING - /);
      const warnings = r.stdout.split("\n").filter((l) => l.startsWith("WARNING: "));
      assert.equal(warnings.length, 1, r.stdout);
      assert.match(
        warnings[0]!,
        new RegExp(`legacy lock ${join(dir, "backup.lock")} is stale: pid \\d+ is not running`),
      );

      // Without the accept entry the ownerless flag warns too; from audit.paths in the config.
      writeFileSync(config, `audit:\n  paths: [${dir}]\n`);
      const j = await cli(["check", "--format", "json", "--store", url, "--config", config]);
      assert.equal(j.code, 1, j.stdout + j.stderr);
      const report = JSON.parse(j.stdout) as { findings: { code: string; subject: string }[] };
      assert.deepEqual(
        report.findings
          .filter((f) => f.code === "legacy_lock")
          .map((f) => f.subject)
          .sort(),
        [join(dir, "backup.lock"), join(dir, "maintenance")],
      );
    }));
});
