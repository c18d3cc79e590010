/** How the drill and its demo agent name a job's run and side effect. */
export function jobRunId(runtimeId: string, job: string): string {
  return `${runtimeId}:job-${job}`;
}

/** The idempotency key: derived from the logical operation (charge job N), never random. */
export function jobKey(job: string): string {
  return `job:${job}:charge`;
}
