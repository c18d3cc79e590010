import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { invalidInput } from "../domain/errors.js";
import { parsePolicy, type MaintenancePolicy } from "../domain/maintenance-policy.js";

/**
 * Reads a maintenance policy from a YAML (or JSON) file: either the policy keys at the top
 * level, or under a `maintenance:` key (so it can live in quiesce.yaml beside other settings).
 *
 *     maintenance:
 *       drain_timeout: 90s
 *       on_deadline: checkpoint_and_stop      # or abort_and_review
 *       unknown_side_effects: quarantine      # or fail
 *       accept_new_work: false
 */
export function loadPolicyFile(path: string): MaintenancePolicy {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw invalidInput(`${path}: cannot read the policy file (${(e as Error).message})`);
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw invalidInput(`${path}: not valid YAML or JSON (${(e as Error).message.split("\n")[0]})`);
  }
  const section =
    doc !== null && typeof doc === "object" && "maintenance" in doc ? doc.maintenance : doc;
  return parsePolicy(section ?? {}, path);
}
