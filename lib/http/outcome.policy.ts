import type { SendOutcome } from '../errors/email.error.js';

/**
 * What a failed exchange proves about the request:
 * - `not-sent`: it never left (refused connection, deadline or abort before sending, 4xx but 409);
 * - `maybe-processed`: it may have reached the service and been acted on (timeout or reset after
 *   sending, 409, 5xx, an answer that breaks the contract, an abort in flight).
 */
export type Evidence = 'not-sent' | 'maybe-processed';

/**
 * The one place that turns what an exchange proves into the `outcome` its error carries. Only a
 * call that may create a message has an outcome; a read has none.
 */
export function outcomeOf(createsMessage: boolean, evidence: Evidence): SendOutcome | undefined {
  if (!createsMessage) return undefined;
  return evidence === 'not-sent' ? 'not-sent' : 'uncertain';
}
