import type { ModuleRef } from '@nestjs/core';
import { getEmailServiceToken } from '../email.module-definition.js';
import type { EmailService } from '../service/email.service.js';
import { EmailError } from '../errors/email.error.js';
import { JOB_STORE_FAILURE } from '../policy/job.policy.js';

/** The `EmailService` of the `EmailModule` instance named `name` (the default one without a name). */
export function findEmailService(moduleRef: ModuleRef, name: string | undefined): EmailService {
  try {
    return moduleRef.get<EmailService>(getEmailServiceToken(name), { strict: false });
  } catch {
    throw new EmailError(
      name === undefined
        ? 'EmailQueueModule / EmailOutboxModule need EmailModule.forRoot(...) in the application'
        : `no EmailModule instance named "${name}" (EmailModule.forRoot({ name: '${name}', ... }))`,
    );
  }
}

/**
 * Runs a worker's write of a job (its outcome, or the job given back) until its store takes it: at once, then
 * again with backoff (250 ms doubling to 1 s) while the store does not answer (a restart, a failover), for
 * `JOB_STORE_FAILURE.giveUpMs` at most, or until `running()` says the worker is closing. True once written; false
 * leaves the job to its engine, which takes it back from a worker that never ended it (BullMQ's stalled check,
 * pg-boss's expiry), and the next attempt counts the one cut off.
 */
export async function writeWhenStoreAnswers(
  write: () => Promise<unknown>,
  running: () => boolean,
): Promise<boolean> {
  const until = Date.now() + JOB_STORE_FAILURE.giveUpMs;
  for (let waitMs = 250; ; waitMs = Math.min(1000, waitMs * 2)) {
    try {
      await write();
      return true;
    } catch {
      if (!running() || Date.now() + waitMs > until) return false;
      await new Promise((r) => setTimeout(r, waitMs).unref?.());
    }
  }
}
