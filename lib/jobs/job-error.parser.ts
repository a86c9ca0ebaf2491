import * as errors from '../errors/index.js';
import { EmailError } from '../errors/email.error.js';
import type { StoredJobError } from '../interfaces/email-job.interface.js';

type ErrorClass = new (...args: never[]) => Error;

const CLASSES = new Map<string, ErrorClass>(
  (Object.values(errors) as unknown[])
    .filter((value): value is ErrorClass => typeof value === 'function' && value.prototype instanceof Error)
    .map((ctor) => [ctor.name, ctor]),
);

/** Turns the error a job ended with into plain JSON kept in the job. */
export function storeJobError(err: unknown): StoredJobError {
  const e = err instanceof Error ? err : new Error(String(err));
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(e)) {
    if (key === 'cause') continue;
    if (value === undefined || typeof value === 'function') continue;
    fields[key] = value instanceof Date ? value.toISOString() : value;
  }
  const outcome = (e as { outcome?: string }).outcome;
  return { name: e.name, message: e.message, ...(outcome ? { outcome } : {}), fields };
}

/** Rebuilds the matching `EmailError` subclass (fields kept) from what a job kept; any process can do it.
 * @publicApi
 */
export function rebuildJobError(stored: StoredJobError): Error {
  const ctor = CLASSES.get(stored.name) ?? EmailError;
  const err = Object.create(ctor.prototype) as Error;
  Object.defineProperty(err, 'message', { value: stored.message, writable: true, configurable: true });
  Object.defineProperty(err, 'stack', {
    value: `${stored.name}: ${stored.message}\n    (rebuilt from a job)`,
    writable: true,
    configurable: true,
  });
  Object.assign(err, stored.fields);
  if (stored.name === 'EmailBatchUncertainError' || 'since' in stored.fields) {
    const since = (err as { since?: unknown }).since;
    if (typeof since === 'string') Object.assign(err, { since: new Date(since) });
  }
  return err;
}
