import type { Context } from "hono";
import { z } from "zod";
import { badRequest } from "./http-errors.js";

/** Request bodies are small JSON objects; anything larger is refused before it is read whole. */
export const MAX_BODY_BYTES = 16 * 1024;

/** Who acts: every operator action names a person, and the event records it. */
export const operatorField = z
  .string({ error: "operator: say who you are (a name; it goes into the event)" })
  .trim()
  .min(1, { error: "operator: say who you are (a name; it goes into the event)" })
  .max(100, { error: "operator: at most 100 characters" })
  .regex(/^[^\p{Cc}]+$/u, { error: "operator: no control characters" });

export const reasonField = z
  .string({ error: "reason: say why (it goes into the record)" })
  .trim()
  .min(1, { error: "reason: say why (it goes into the record)" })
  .max(2000, { error: "reason: at most 2000 characters" });

/** Parses and validates a JSON body; a failure is a 400 with one sentence naming the field. */
export async function readBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  let raw: unknown;
  try {
    raw = JSON.parse(await c.req.text());
  } catch {
    throw badRequest("the request body is not valid JSON");
  }
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const where = issue.path.join(".");
  if (issue.code === "unrecognized_keys")
    throw badRequest(`unknown field(s): ${issue.keys.join(", ")}`);
  if (where === "") throw badRequest("the request body must be a JSON object");
  throw badRequest(
    issue.message.startsWith(`${where}:`) ? issue.message : `${where}: ${issue.message}`,
  );
}
