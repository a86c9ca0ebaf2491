import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { EmailSandbox } from 'nestjs-transactional-email/testing';

/** Token of the embedded sandbox (null when the app talks to a real service). */
export const LOCAL_SANDBOX = Symbol('LOCAL_SANDBOX');

/** Closes the embedded sandbox, if any, when the app shuts down (after the email module's own hook). */
@Injectable()
export class LocalSandboxLifecycle implements OnApplicationShutdown {
  constructor(@Inject(LOCAL_SANDBOX) private readonly sandbox: EmailSandbox | null) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.sandbox) return;
    await this.sandbox.close();
    new Logger('Sample').log('Closed the embedded email sandbox');
  }
}
