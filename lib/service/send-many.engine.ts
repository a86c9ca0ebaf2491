import { EmailBatchUncertainError } from '../errors/email-batch-uncertain.error.js';
import { EmailError } from '../errors/email.error.js';
import { failureFacts } from '../errors/failure-facts.helpers.js';
import { mayHaveCreated } from '../policy/job.policy.js';
import type { CallOptions, FindSentOptions } from '../interfaces/call-options.interface.js';
import type { BatchEmailItem } from '../interfaces/email-input.interface.js';
import type { EmailLog, FindSentResult } from '../interfaces/email-records.interface.js';
import type { SendManyResult } from '../interfaces/send-many.interface.js';
import type { CheckedMany } from '../validation/batch.rules.js';

/** Most items in one `POST /emails/batch` (the contract's limit). */
export const SEND_MANY_BATCH_ITEMS = 100;

/** What `sendMany` needs of the service: its batch send and its look-up. */
export interface SendManyDeps {
  sendBatch(items: BatchEmailItem[], options: CallOptions): Promise<EmailLog[]>;
  findSent(item: BatchEmailItem, options: FindSentOptions): Promise<FindSentResult>;
}

/** A slice of the list sent as one batch, and the index in the list of each of its items. */
interface Chunk {
  readonly indexes: number[];
  readonly items: BatchEmailItem[];
}

/**
 * Cuts the list into batches of at most 100 items and, when the recipients budget is given, at most
 * that many recipients (a larger batch could never have its share). Items `skip` marks are left out.
 */
export function chunkItems(
  items: readonly BatchEmailItem[],
  maxRecipients = Infinity,
  skip?: ReadonlyArray<unknown>,
): Chunk[] {
  const chunks: Chunk[] = [];
  let current: Chunk = { indexes: [], items: [] };
  let recipients = 0;
  items.forEach((item, i) => {
    if (skip?.[i] !== undefined) return;
    const n = item.to.length;
    const full = current.items.length === SEND_MANY_BATCH_ITEMS || recipients + n > maxRecipients;
    if (current.items.length > 0 && full) {
      chunks.push(current);
      current = { indexes: [], items: [] };
      recipients = 0;
    }
    current.indexes.push(i);
    current.items.push(item);
    recipients += n;
  });
  if (current.items.length > 0) chunks.push(current);
  return chunks;
}

const stopped = (): Error =>
  new EmailError('not sent: sendMany was stopped by its signal before this batch', { outcome: 'not-sent' });

/**
 * `EmailService.sendMany`: the batches one after the other through `sendBatch` (so under the rate
 * limit, and retried only when nothing can have been accepted). A batch that ends uncertain is never
 * sent again: each of its items is looked up (`findSent`, since the batch started) and is `'sent'` only
 * with proof of its own record, `'uncertain'` otherwise. Nothing is sent twice.
 */
export async function runSendMany(
  checked: CheckedMany,
  deps: SendManyDeps,
  maxRecipients?: number,
  /** Items refused before any batch (the suppression list): answered not-sent with their error. */
  refused?: ReadonlyArray<Error | undefined>,
): Promise<SendManyResult[]> {
  const { items, batchOptions, onBatch } = checked;
  const chunks = chunkItems(items, maxRecipients, refused);
  const results: SendManyResult[] = new Array<SendManyResult>(items.length);
  let done = 0;
  refused?.forEach((error, index) => {
    if (error === undefined) return;
    results[index] = { index, status: 'not-sent', error };
    done++;
  });
  for (let b = 0; b < chunks.length; b++) {
    const chunk = chunks[b];
    const answers = batchOptions.signal?.aborted
      ? chunk.indexes.map((index) => ({ index, status: 'not-sent' as const, error: stopped() }))
      : await sendChunk(chunk, batchOptions, deps);
    for (const a of answers) results[a.index] = a;
    done += answers.length;
    try {
      onBatch?.({ batch: b, batches: chunks.length, results: answers, done, total: items.length });
    } catch {
      // a progress callback cannot change what was sent
    }
  }
  return results;
}

async function sendChunk(chunk: Chunk, options: CallOptions, deps: SendManyDeps): Promise<SendManyResult[]> {
  const started = new Date();
  try {
    const records = await deps.sendBatch(chunk.items, options);
    if (records.length === chunk.items.length) {
      return records.map((record, i) => ({ index: chunk.indexes[i], status: 'sent', record }));
    }
    // The service answered for fewer (or more) items than it was given: which is which cannot be told.
    const odd = new EmailError(
      `the batch was answered with ${records.length} records for ${chunk.items.length} items`,
      { outcome: 'uncertain' },
    );
    return reconcile(chunk, started, odd, options, deps);
  } catch (err) {
    if (err instanceof EmailBatchUncertainError) return reconcile(chunk, err.since, err, options, deps);
    const error = err instanceof Error ? err : new Error(String(err));
    // The table decides, as for a job attempt: a fault we cannot read may have come after the batch went out.
    if (mayHaveCreated(failureFacts(err))) return reconcile(chunk, started, error, options, deps);
    return chunk.indexes.map((index) => ({ index, status: 'not-sent', error }));
  }
}

/** Each item of an uncertain batch, looked up one by one: proven, or left uncertain. */
async function reconcile(
  chunk: Chunk,
  since: Date,
  error: Error,
  options: CallOptions,
  deps: SendManyDeps,
): Promise<SendManyResult[]> {
  const answers: SendManyResult[] = [];
  // The look-ups run even when the caller's signal stopped the batch: their answers are what it needs.
  const lookup: FindSentOptions = { since, timeoutMs: options.timeoutMs, maxRetries: options.maxRetries };
  for (let i = 0; i < chunk.items.length; i++) {
    const index = chunk.indexes[i];
    try {
      const found = await deps.findSent(chunk.items[i], lookup);
      answers.push(
        found.record
          ? { index, status: 'sent', record: found.record }
          : { index, status: 'uncertain', error },
      );
    } catch {
      answers.push({ index, status: 'uncertain', error });
    }
  }
  return answers;
}
