import { createHash } from 'node:crypto';
import { EmailError } from '../errors/email.error.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import { parseEmailLog } from '../records/email-record.parser.js';

/** The SHA-256 of a value as JSON with sorted keys: the same input gives the same fingerprint in every process. */
export function fingerprintOf(value: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
          )
        : v;
  return createHash('sha256')
    .update(JSON.stringify(canonical(value)))
    .digest('hex');
}

/** Waits for `promise` until `deadline` (a Date.now() value), never rejecting. True when it settled. */
export async function settledBy(promise: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
  });
  const done = promise.then(
    () => true as const,
    () => true as const,
  );
  return Promise.race([done, late]).finally(() => clearTimeout(timer));
}

/** What a job's status adds once it ended: a sent job's record, or the summary of a failed one's final error. */
export interface JobEnding {
  messageId?: number;
  record?: EmailLog;
  error?: { name: string; message: string; outcome?: string };
}

/**
 * The ending of a job in `state`: the record it `returned` when sent (dates as `Date`), its final error's
 * name, message and outcome when failed (`finalError` rebuilds it), nothing otherwise.
 */
export function jobEnding(
  jobId: string,
  state: string,
  returned: unknown,
  finalError: () => Error,
): JobEnding {
  if (state === 'sent' && returned) {
    const record = parseEmailLog(returned, `job ${jobId}`);
    return { record, messageId: record.id };
  }
  if (state !== 'failed') return {};
  const error = finalError() as Error & { outcome?: string };
  return {
    error: { name: error.name, message: error.message, ...(error.outcome ? { outcome: error.outcome } : {}) },
  };
}

/**
 * Waits for a job to end: `check` gives its record once sent, its state while not done, and throws its final
 * error (or an unknown job's); polled at 20 ms, doubling to 250 ms, until `timeoutMs` has passed.
 */
export async function waitForJob(
  jobId: string,
  timeoutMs: number,
  check: () => Promise<EmailLog | string>,
): Promise<EmailLog> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
    const found = await check();
    if (typeof found !== 'string') return found;
    if (Date.now() >= deadline)
      throw new EmailError(`Email job ${jobId} still ${found} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, Math.min(pause, Math.max(1, deadline - Date.now()))));
  }
}
