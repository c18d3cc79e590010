import type { Acquisition, ContenderMessage, ParentMessage } from "./contender.js";
import { epochMs, sleep } from "../lib/timed-loop.js";

type Done = Extract<ContenderMessage, { type: "done" }>;

/** What a contender holds with: acquire (a token, or null when refused) and release. */
export interface ContenderSubject {
  acquire: () => Promise<number | null>;
  release: (token: number) => Promise<void>;
  /** Called at the go signal: counters reset here count the run alone. */
  onStart?: () => void;
  /** Added to the final message (the store calls a contender counted). */
  report?: () => Pick<Done, "calls" | "callMs">;
}

/**
 * The loop every fairness contender runs (a child process of the bench): tell the parent it is
 * ready, wait for the go and the start time, then acquire, hold `holdMs`, release and get back
 * in line at once until the deadline, and send the log, the refusals and the CPU used.
 */
export async function contend(holdMs: number, subject: ContenderSubject): Promise<void> {
  const send = (m: ContenderMessage) => process.send!(m);
  const go = await new Promise<ParentMessage>((resolve) => {
    process.once("message", (m) => resolve(m as ParentMessage));
    send({ type: "ready" });
  });
  const log: Acquisition[] = [];
  let refused = 0;
  let error: string | undefined;
  let cpu = process.cpuUsage();
  try {
    await sleep(Math.max(0, go.startAt - epochMs()));
    cpu = process.cpuUsage();
    subject.onStart?.();
    while (epochMs() < go.endAt) {
      const waitStart = epochMs();
      const token = await subject.acquire();
      if (token === null) {
        refused++;
        continue;
      }
      const acquiredAt = epochMs();
      await sleep(holdMs);
      const heldUntil = epochMs();
      await subject.release(token);
      log.push({
        pid: process.pid,
        token,
        waitStart,
        acquiredAt,
        heldUntil,
        releasedAt: epochMs(),
      });
    }
  } catch (e) {
    error = (e as Error).message;
  }
  const used = process.cpuUsage(cpu);
  send({
    type: "done",
    log,
    refused,
    error,
    calls: {},
    ...subject.report?.(),
    cpuMs: (used.user + used.system) / 1000,
  });
}
