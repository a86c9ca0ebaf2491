import { startChildWorker, type WorkerProcess } from '../../support/worker-process.js';

/** A worker process started by `startOutboxWorker`. */
export type OutboxWorkerProcess = WorkerProcess;

/**
 * Starts an outbox worker process and waits for its `ready`.
 * `env`: DATABASE_URL, EMAIL_BASE_URL, EMAIL_API_KEY, OUTBOX_SCHEMA, ATTEMPT_TIMEOUT_MS ...
 */
export function startOutboxWorker(
  env: Record<string, string>,
  timeoutMs?: number,
): Promise<OutboxWorkerProcess> {
  return startChildWorker('test/outbox/support/outbox-worker.child.mjs', env, timeoutMs);
}
