import type { ModuleRef } from '@nestjs/core';
import { getEmailServiceToken } from '../email.module-definition.js';
import type { EmailService } from '../service/email.service.js';
import { EmailError } from '../errors/email.error.js';

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
