import type { Command } from "commander";
import { formatDuration, parseDuration } from "../../domain/duration.js";
import { invalidInput } from "../../domain/errors.js";
import { validateMaintenanceId, validateRuntimeId } from "../../domain/journal-names.js";
import { drainTimeout } from "../../domain/maintenance-policy.js";
import { operatorName } from "../../journal/inspect.js";
import { runtimeStatus, startMaintenance, waitForMaintenance } from "../../runtime/maintenance.js";
import { Exit } from "../exit-codes.js";
import { withLeases, withStore, READ_ONLY } from "../context.js";
import { printJson, table } from "../output.js";

interface StartFlags {
  id: string;
  drainTimeout?: string;
  wait?: boolean;
  timeout?: string;
  json?: boolean;
  store?: string;
  config?: string;
}

/** `quiesce maintenance start|status`: the maintenance-window protocol from another process. */
export function registerMaintenance(program: Command): void {
  const mw = program
    .command("maintenance")
    .summary("drain an agent runtime for a maintenance window; show runtimes")
    .description(
      "Runtimes move RUNNING -> DRAINING -> QUIESCED -> STOPPED (or NEEDS_REVIEW when the drain deadline\n" +
        "leaves a side effect unclassified). `start` asks one to drain; it notices within a second.",
    );

  withStore(
    mw
      .command("start")
      .description("ask a running runtime to drain (exit 0 also when nothing runs to drain)")
      .argument("<runtime>")
      .requiredOption("--id <maintenance-id>", "this maintenance window's id, e.g. mw-2024-06-01")
      .option(
        "--drain-timeout <duration>",
        "how long runs get to reach a checkpoint (default: the runtime's policy)",
      )
      .option("--wait", "wait until the runtime stopped (exit 0) or ended in NEEDS_REVIEW (exit 1)")
      .option(
        "--timeout <duration>",
        "with --wait: give up after this long (default: drain timeout + 1m)",
      )
      .option("--json", "print the runtime record as JSON"),
  ).action(async (runtimeId: string, flags: StartFlags) => {
    validateRuntimeId(runtimeId, "runtime");
    validateMaintenanceId(flags.id, "--id");
    const drainMs =
      flags.drainTimeout === undefined ? null : drainTimeout(flags.drainTimeout, "--drain-timeout");
    const waitMs = flags.timeout === undefined ? null : parseDuration(flags.timeout, "--timeout");
    const code = await withLeases(flags, async (leases) => {
      const r = await startMaintenance(leases.store, {
        runtimeId,
        maintenanceId: flags.id,
        drainTimeoutMs: drainMs,
        by: operatorName(),
      });
      if (r.status === "not_running") {
        if (flags.json) printJson(await runtimeStatus(leases.store, r.runtime));
        else process.stdout.write(`${r.message}\n`);
        return Exit.OK;
      }
      const timeout = drainMs ?? r.runtime.policy.drainTimeoutMs;
      if (!flags.json)
        process.stdout.write(
          `${r.status === "repeated" ? "already requested" : "requested"}: maintenance ${flags.id} for runtime ${runtimeId} (drain timeout ${formatDuration(timeout)})\n`,
        );
      if (!flags.wait) {
        if (flags.json) printJson(await runtimeStatus(leases.store, r.runtime));
        return Exit.OK;
      }
      const end = await waitForMaintenance(
        leases.store,
        runtimeId,
        flags.id,
        waitMs ?? timeout + 60_000,
      );
      if (flags.json) printJson(await runtimeStatus(leases.store, end));
      else
        process.stdout.write(
          `runtime ${runtimeId} is ${end.state}${end.note ? `: ${end.note}` : ""}\n`,
        );
      return end.state === "STOPPED" ? Exit.OK : Exit.FAILURE;
    });
    process.exitCode = code;
  });

  withStore(
    mw
      .command("status")
      .description("every runtime (or one) with its state, maintenance, deadline and runs")
      .argument("[runtime]")
      .option("--json", "JSON output"),
  ).action(
    async (
      runtimeId: string | undefined,
      flags: { json?: boolean; store?: string; config?: string },
    ) => {
      if (runtimeId !== undefined) validateRuntimeId(runtimeId, "runtime");
      await withLeases(
        flags,
        async (leases) => {
          const store = leases.store;
          const records =
            runtimeId === undefined
              ? (await store.journal.listRuntimes()).runtimes
              : [(await store.journal.getRuntime(runtimeId)).runtime].filter((r) => r !== null);
          if (runtimeId !== undefined && records.length === 0)
            throw invalidInput(`no runtime named ${runtimeId}`);
          const views = await Promise.all(records.map((r) => runtimeStatus(store, r)));
          if (flags.json) printJson(runtimeId === undefined ? { runtimes: views } : views[0]);
          else if (views.length === 0) process.stdout.write("no runtimes\n");
          else if (runtimeId !== undefined) process.stdout.write(details(views[0]!));
          else
            process.stdout.write(
              table(
                [
                  "RUNTIME",
                  "STATE",
                  "MAINTENANCE",
                  "ACCEPTING",
                  "ACTIVE",
                  "REVIEW",
                  "DEADLINE",
                  "PROCESS",
                  "LEASE",
                ],
                views.map((v) => [
                  v.runtimeId,
                  v.state,
                  v.maintenanceId ?? "-",
                  v.acceptingWork ? "yes" : "no",
                  String(v.activeRuns),
                  String(v.runsNeedingReview),
                  v.deadlineAt ?? "-",
                  `${v.process.host ?? "?"} pid ${v.process.pid ?? "?"}`,
                  v.lease.state,
                ]),
              ),
            );
        },
        READ_ONLY,
      );
    },
  );
}

function details(v: Awaited<ReturnType<typeof runtimeStatus>>): string {
  const rows: [string, string][] = [
    ["runtime", v.runtimeId],
    ["state", v.state + (v.reviewReason ? ` (${v.reviewReason})` : "")],
    ["maintenance", v.maintenanceId ?? "-"],
    ["accepting work", v.acceptingWork ? "yes" : "no"],
    ["active runs", String(v.activeRuns)],
    ["runs needing review", String(v.runsNeedingReview)],
    ["started", v.startedAt ?? "-"],
    ["deadline", v.deadlineAt ?? "-"],
    ["updated", v.updatedAt ?? "-"],
    [
      "policy",
      Object.entries(v.policy)
        .map(([k, x]) => `${k}=${String(x)}`)
        .join(" "),
    ],
    [
      "process",
      `${v.process.host ?? "?"} pid ${v.process.pid ?? "?"} (${v.process.incarnation}, token ${v.process.token})`,
    ],
    ["lease", v.lease.state === "free" ? "free" : `${v.lease.state}, token ${v.lease.token}`],
    [
      "pending request",
      v.pendingRequest ? `${v.pendingRequest.maintenanceId} by ${v.pendingRequest.by}` : "-",
    ],
    ["note", v.note ?? "-"],
  ];
  const w = Math.max(...rows.map((r) => r[0].length));
  return rows.map(([k, x]) => `${k.padEnd(w)}  ${x}`).join("\n") + "\n";
}
