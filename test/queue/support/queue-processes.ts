import { startChildWorker, type WorkerProcess } from '../../support/worker-process.js';

export { until, type WorkerProcess } from '../../support/worker-process.js';

/**
 * Starts a queue worker process and waits for its `ready`.
 * `env`: REDIS_URL, EMAIL_BASE_URL, EMAIL_API_KEY, QUEUE_NAME, WORKER_OPTIONS ...
 */
export function startWorkerProcess(env: Record<string, string>, timeoutMs?: number): Promise<WorkerProcess> {
  return startChildWorker('test/queue/support/queue-worker.child.mjs', env, timeoutMs);
}
