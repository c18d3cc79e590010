import type { Command } from "commander";
import { invalidInput } from "../../domain/errors.js";
import { validateEffectKey, validateRunId, validateRuntimeId } from "../../domain/journal-names.js";
import { RUN_STATES, type RunState } from "../../domain/journal-record.js";
import { describeRun, operatorName } from "../../journal/inspect.js";
import { resolveEffect } from "../../journal/resolve.js";
import { withLeases, withStore, READ_ONLY } from "../context.js";
import { iso, printJson, table } from "../output.js";

interface ListFlags {
  state?: string;
  runtime?: string;
  limit: string;
  json?: boolean;
  store?: string;
  config?: string;
}

/** `quiesce runs list|show|resolve`: the side-effect journal, and a human's reconciliation. */
export function registerRuns(program: Command): void {
  const runs = program
    .command("runs")
    .summary("runs of the side-effect journal; resolve what needs review")
    .description(
      "Runs of agent runtimes and their side effects (PLANNED -> DISPATCHED -> ACKNOWLEDGED -> OBSERVED).\n" +
        "A run in needs_review has an effect nobody can classify: decide with `runs resolve`.",
    );

  withStore(
    runs
      .command("list")
      .description("runs, newest first")
      .option("--state <state>", `only runs in this state (${RUN_STATES.join(", ")})`)
      .option("--runtime <id>", "only runs of this runtime")
      .option("--limit <n>", "at most this many", "200")
      .option("--json", "JSON output"),
  ).action(async (flags: ListFlags) => {
    const state = flags.state === undefined ? undefined : parseRunState(flags.state);
    if (flags.runtime !== undefined) validateRuntimeId(flags.runtime, "--runtime");
    const limit = Number(flags.limit);
    if (!Number.isInteger(limit) || limit < 1)
      throw invalidInput(`--limit: "${flags.limit}" is not a positive integer`);
    await withLeases(
      flags,
      async (leases) => {
        const { runs: list, now } = await leases.store.journal.listRuns({
          ...(state ? { state } : {}),
          ...(flags.runtime ? { runtimeId: flags.runtime } : {}),
          limit,
        });
        if (flags.json) {
          printJson({
            storeNow: iso(now),
            runs: list.map((r) => ({
              ...r,
              createdAt: iso(r.createdAt),
              updatedAt: iso(r.updatedAt),
            })),
          });
          return;
        }
        if (list.length === 0) {
          process.stdout.write(`no runs${state ? ` in state ${state}` : ""}\n`);
          return;
        }
        process.stdout.write(
          table(
            ["RUN", "RUNTIME", "STATE", "SEQ", "UPDATED", "REASON"],
            list.map((r) => [
              r.runId,
              r.runtimeId,
              r.state,
              String(r.seq),
              iso(r.updatedAt),
              r.reviewReason ?? "",
            ]),
          ),
        );
      },
      READ_ONLY,
    );
  });

  withStore(
    runs
      .command("show")
      .description(
        "one run: its checkpoint and every effect with state, sequence, request id, result",
      )
      .argument("<run>")
      .option("--json", "JSON output"),
  ).action(async (runId: string, flags: { json?: boolean; store?: string; config?: string }) => {
    validateRunId(runId, "run");
    await withLeases(
      flags,
      async (leases) => {
        const snap = await leases.store.journal.getRun(runId);
        if (!snap) throw invalidInput(`no run ${runId} in the journal`);
        const view = describeRun(snap);
        if (flags.json) {
          printJson(view);
          return;
        }
        const r = view.run;
        const head: [string, string][] = [
          ["run", r.runId],
          ["runtime", r.runtimeId],
          ["state", r.state + (r.reviewReason ? ` (${r.reviewReason})` : "")],
          ["sequence", String(r.seq)],
          ["lease", `${r.scope}, token ${r.token}`],
          ["created", r.createdAt],
          ["updated", r.updatedAt],
          ["checkpoint", r.checkpoint ?? "-"],
        ];
        const w = Math.max(...head.map((h) => h[0].length));
        process.stdout.write(head.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join("\n") + "\n\n");
        if (view.effects.length === 0) {
          process.stdout.write("no effects\n");
          return;
        }
        process.stdout.write(
          table(
            ["KEY", "STATE", "SEQ", "ATTEMPT", "REQUEST ID", "RECORD", "RESULT / REASON"],
            view.effects.map((e) => [
              e.key,
              e.state,
              String(e.seq),
              String(e.attempt),
              e.requestId ?? "-",
              e.valid ? "valid" : `INVALID: ${e.problem}`,
              clip(e.state === "NEEDS_REVIEW" ? (e.reviewReason ?? "") : (e.result ?? "-")),
            ]),
          ),
        );
        // What the agent recorded with each effect (tool and input, page URL, identity, page
        // state hash, last action): what a reviewer reads before deciding.
        for (const e of view.effects)
          if (e.context !== null)
            process.stdout.write(`\ncontext of ${e.key}:\n${contextLines(e.context)}`);
      },
      READ_ONLY,
    );
  });

  withStore(
    runs
      .command("resolve")
      .description(
        "a human's reconciliation of a quarantined effect, recorded as an event; the run can then continue",
      )
      .argument("<run>")
      .requiredOption("--effect <key>", "the effect's idempotency key")
      .requiredOption("--as <outcome>", "observed (it landed) or not-sent (send it again)")
      .requiredOption("--reason <text>", "why: what you checked (goes into the record)")
      .option("--result <json>", "with --as observed: the result the run uses next (JSON)")
      .option("--operator <name>", "who decides (default: your login name)")
      .option("--json", "print the resolved run as JSON"),
  ).action(
    async (
      runId: string,
      flags: {
        effect: string;
        as: string;
        reason: string;
        result?: string;
        operator?: string;
        json?: boolean;
        store?: string;
        config?: string;
      },
    ) => {
      validateRunId(runId, "run");
      validateEffectKey(flags.effect, "--effect");
      if (flags.as !== "observed" && flags.as !== "not-sent")
        throw invalidInput(`--as: "${flags.as}" is not observed or not-sent`);
      let result: unknown;
      if (flags.result !== undefined) {
        if (flags.as !== "observed") throw invalidInput("--result goes with --as observed only");
        try {
          result = JSON.parse(flags.result);
        } catch {
          throw invalidInput(`--result: not valid JSON (quote strings: '"ok"')`);
        }
      }
      await withLeases(flags, async (leases) => {
        const r = await resolveEffect(leases.store, {
          runId,
          key: flags.effect,
          as: flags.as as "observed" | "not-sent",
          reason: flags.reason,
          ...(result !== undefined ? { result } : {}),
          operator: flags.operator ?? operatorName(),
        });
        if (flags.json) {
          printJson(describeRun({ run: r.run, effects: [r.effect], now: r.run.updatedAt }));
          return;
        }
        process.stdout.write(
          `resolved ${flags.effect} of run ${runId} as ${flags.as}: now ${r.effect.state}; run ${r.run.state}` +
            (r.remaining.length > 0
              ? ` (still waiting for review: ${r.remaining.join(", ")})`
              : "") +
            "\n",
        );
      });
    },
  );
}

function parseRunState(s: string): RunState {
  const v = s.replace(/-/g, "_").toLowerCase();
  if (!(RUN_STATES as readonly string[]).includes(v))
    throw invalidInput(`--state: "${s}" is not a run state (${RUN_STATES.join(", ")})`);
  return v as RunState;
}

function clip(s: string, n = 60): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** A recorded context as `  name  value` lines (nested values as JSON); other JSON as is. */
function contextLines(text: string): string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return `  ${text}\n`;
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) return `  ${text}\n`;
  const rows = Object.entries(v as Record<string, unknown>).map(
    ([k, x]) => [k, typeof x === "string" ? x : JSON.stringify(x)] as const,
  );
  const w = Math.max(0, ...rows.map(([k]) => k.length));
  return rows.map(([k, x]) => `  ${k.padEnd(w)}  ${x}\n`).join("");
}
