import type { ModuleRef } from '@nestjs/core';
import { getEmailServiceToken } from '../email.module-definition.js';
import type { EmailService } from '../service/email.service.js';
import { EmailError } from '../errors/email.error.js';

/** Waits for `promise` until `deadline` (a Date.now() value), never rejecting. True when it settled. */
export async function settledBy(promise: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    // unref: a wait of this kind never keeps the process alive on its own (a boot check outliving close)
    timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now())).unref();
  });
  const done = promise.then(
    () => true as const,
    () => true as const,
  );
  return Promise.race([done, late]).finally(() => clearTimeout(timer));
}

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
