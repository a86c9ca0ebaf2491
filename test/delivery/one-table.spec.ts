import {
  EmailBadRequestError,
  EmailConflictError,
  EmailConnectionError,
  EmailError,
  EmailRateLimitError,
  EmailServerError,
  EmailTimeoutError,
  EmailUnavailableError,
  EmailValidationError,
} from '../../lib/index.js';
import { failureFacts } from '../../lib/errors/failure-facts.helpers.js';
import { attemptPlan, mayHaveCreated } from '../../lib/policy/job.policy.js';
import { runSendMany } from '../../lib/service/send-many.engine.js';

/**
 * Every caller that decides what a failure means asks the one table (`policy/`) through `failureFacts`.
 * This spec asks the same failures of each caller and fails when two of them answer differently: the
 * next disagreement (like the one where `sendMany` called a fault it could not read "not sent" while a
 * job called it "may have been accepted") is caught here.
 */
const at = { method: 'POST', path: '/emails' };
const FAILURES: Array<[string, unknown]> = [
  ['a TypeError (a fault we cannot read)', new TypeError('boom')],
  ['a plain string thrown', 'boom'],
  ['an EmailError without outcome', new EmailError('odd')],
  ['400', new EmailBadRequestError({ ...at, status: 400, outcome: 'not-sent' })],
  ['409', new EmailConflictError({ ...at, status: 409, outcome: 'uncertain' })],
  ['429', new EmailRateLimitError({ ...at, status: 429, outcome: 'not-sent', retryAfterMs: 2000 })],
  ['500', new EmailServerError({ ...at, status: 500, outcome: 'uncertain' })],
  ['503', new EmailUnavailableError({ ...at, status: 503, outcome: 'uncertain' })],
  ['a timeout in flight', new EmailTimeoutError({ ...at, timeoutMs: 10, outcome: 'uncertain' })],
  [
    'a refused connection',
    new EmailConnectionError({ ...at, code: 'ECONNREFUSED', reason: 'refused', outcome: 'not-sent' }),
  ],
  ['a validation error', new EmailValidationError([{ path: 'to', message: 'is required' }])],
];

const item = { from: 'shop@example.com', to: ['ada@example.com'], subject: 'Your code', text: 'A' };
const limits = { maxAttempts: 3, maxInterruptions: 1, backoff: { delayMs: 10, maxDelayMs: 10 } };

/** What `sendMany` makes of a batch that failed with `err`: looked up ('uncertain') or not sent. */
async function sendManyReading(err: unknown): Promise<'may exist' | 'none'> {
  const [result] = await runSendMany(
    { items: [item], batchOptions: {} },
    {
      sendBatch: () => Promise.reject(err),
      // nothing found: an item that may exist ends uncertain, never sent
      findSent: () => Promise.resolve({ certainty: 'none', candidates: [] } as never),
    },
  );
  return result?.status === 'not-sent' ? 'none' : 'may exist';
}

describe('one decision table: the same failure gets the same answer from every caller', () => {
  it.each(FAILURES)('%s', async (_, err) => {
    const table = mayHaveCreated(failureFacts(err)) ? 'may exist' : 'none';
    const plan = attemptPlan(failureFacts(err), { attempts: 1, uncertain: false }, limits, Date.now());
    const job = plan.uncertain ? 'may exist' : 'none';
    // a 429 is a pause for a job and not a batch failure that needs a look-up: both read "none"
    expect({ sendMany: await sendManyReading(err), job }).toEqual({ sendMany: table, job: table });
    // the public flag agrees where the error carries one
    if (err instanceof EmailError && err.outcome !== undefined)
      expect(err.outcome === 'uncertain' ? 'may exist' : 'none').toBe(table);
  });
});
