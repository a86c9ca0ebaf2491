import type { EmailTraceContext } from '../telemetry/trace-context.helpers.js';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import type { StoredJobError } from './job-error.parser.js';

/** What a job holds in its engine's store (Redis for the queue, PostgreSQL for the outbox). */
export interface EmailJobData {
  input: EmailInput;
  idempotencyKey: string;
  /** SHA-256 of the input: the same job id queued again with another input is refused. */
  fingerprint?: string;
  /** Set once an attempt may have been accepted (or its worker died): the job can then only end sent or uncertain. */
  uncertain?: boolean;
  /** The error of the last failed attempt. */
  lastError?: StoredJobError;
  /** The trace context of the request that queued the job (when OpenTelemetry records one). */
  trace?: EmailTraceContext;
}

/** One attempt of a job, as any engine (BullMQ, pg-boss) describes it to the shared routine. */
export interface EmailJobAttempt {
  /** The engine's queue name (for the job span). */
  queueName: string;
  /** The job id the app gave or was given. */
  jobId: string;
  data: EmailJobData;
  /** Attempts finished before this one (0 for the first). */
  attemptsMade: number;
  /** Attempts allowed in all, the first included. */
  maxAttempts: number;
  /** Earlier attempts whose worker died before it could say how they ended. */
  interruptions: number;
}

/** What the shared routine needs from the engine that runs it. */
export interface EmailJobEngineHooks {
  /** Sends one email: `EmailService.send` of the app's `EmailModule`. */
  send: (
    input: EmailInput,
    options: { idempotencyKey: string; maxRetries: 0; reconcile: false },
  ) => Promise<import('../interfaces/email-records.interface.js').EmailLog>;
  /** Worker deaths a job survives; past it the job fails uncertain. */
  maxInterruptions: number;
  /** Pauses sending for this long (the whole queue where the engine can, this process otherwise). */
  rateLimit: (ms: number) => Promise<void>;
  onRateLimited?: (jobId: string, ms: number) => void;
  /** Keeps the job's data (its `uncertain` mark and last error) for the next attempt and for `status`. */
  save: (data: EmailJobData) => Promise<void>;
  /** The engine's error that puts the job back without counting an attempt (after `rateLimit`). */
  rateLimitedError: () => Error;
  /** The engine's error that ends the job at once, with no further attempt. */
  finalError: (message: string) => Error;
}
