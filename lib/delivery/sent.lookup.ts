import type { CallContext } from '../http/email-api.client.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import { parseArray, parseEmailLog } from '../records/email-record.parser.js';
import { FIND_SENT_LIMIT, pickSent, type SentCriteria } from './find-sent.matcher.js';
import type { RetryEngine } from './retry.engine.js';

const LIST_PATH = `/emails?limit=${FIND_SENT_LIMIT}`;
const parseLogs = (json: unknown): EmailLog[] => parseArray(json, parseEmailLog);

/**
 * Looks a send up in the message log: one `GET /emails?limit=100` (retried like any read), then the
 * earliest record that matches `criteria` and that `skip` does not exclude.
 */
export async function lookUpSent(
  engine: RetryEngine,
  criteria: SentCriteria,
  ctx: CallContext,
  maxRetries: number,
  skip?: (record: EmailLog) => boolean,
): Promise<EmailLog | null> {
  const records = await engine.read({ method: 'GET', path: LIST_PATH, parse: parseLogs }, ctx, maxRetries);
  return pickSent(records, criteria, skip);
}
