import { Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { EmailModule } from '../email.module.js';
import { EmailSandbox } from '../testing/email-sandbox.js';
import { SandboxMailbox } from '../testing/sandbox.mailbox.js';
import type { EmailTestingModuleOptions } from './email-testing.options.js';

/** The sandbox and mailbox of one `EmailTestingModule`, and whether the module started the sandbox. */
class TestingMailbox {
  constructor(
    readonly sandbox: EmailSandbox,
    readonly mailbox: SandboxMailbox,
    readonly owned: boolean,
  ) {}
}

/** Closes the mailbox, and the sandbox the module started, when the app shuts down. */
@Injectable()
class EmailTestingShutdown implements OnApplicationShutdown {
  constructor(@Inject(TestingMailbox) private readonly held: TestingMailbox) {}

  async onApplicationShutdown(): Promise<void> {
    await this.held.mailbox.close();
    if (this.held.owned) await this.held.sandbox.close();
  }
}

/** Holds the mailbox; imported by the testing module and by its EmailModule (whose factory reads it). */
@Module({})
class EmailTestingMailboxModule {
  static register(options: EmailTestingModuleOptions): DynamicModule {
    return {
      module: EmailTestingMailboxModule,
      providers: [
        {
          provide: TestingMailbox,
          useFactory: async (): Promise<TestingMailbox> => {
            const given = options.sandbox;
            // A sandbox the module starts does not keep Node running: a setup that fails before the
            // app can close it must not leave the test runner waiting on a listening server.
            const sandbox = given ?? (await EmailSandbox.start({ ...options.sandboxOptions, ref: false }));
            return new TestingMailbox(sandbox, sandbox.mailbox(options.mailbox), !given);
          },
        },
        { provide: SandboxMailbox, inject: [TestingMailbox], useFactory: (h: TestingMailbox) => h.mailbox },
        { provide: EmailSandbox, inject: [TestingMailbox], useFactory: (h: TestingMailbox) => h.sandbox },
        EmailTestingShutdown,
      ],
      exports: [SandboxMailbox, EmailSandbox],
    };
  }
}

/**
 * `EmailModule` pointed at a fresh mailbox of a sandbox, for Nest tests: import it where the app would
 * import `EmailModule`, inject `EmailService` as usual, and inject `SandboxMailbox` to see what was
 * sent. Without a `sandbox` option it starts one; the mailbox (and a sandbox it started) close with
 * the app (`app.close()` or `moduleRef.close()`).
 *
 * @example
 * const moduleRef = await Test.createTestingModule({
 *   imports: [EmailTestingModule.forRoot(), SignupModule],
 * }).compile();
 * const mailbox = moduleRef.get(SandboxMailbox);
 * @publicApi
 */
@Module({})
export class EmailTestingModule {
  /**
   * An `EmailModule` on a fresh mailbox; `SandboxMailbox` and `EmailSandbox` injectable.
   * @example
   * EmailTestingModule.forRoot({ sandbox, mailbox: { domains: ['shop.test'] } })
   */
  static forRoot(options: EmailTestingModuleOptions = {}): DynamicModule {
    const holder = EmailTestingMailboxModule.register(options);
    return {
      module: EmailTestingModule,
      global: options.isGlobal ?? true,
      imports: [
        holder,
        EmailModule.forRootAsync({
          imports: [holder],
          inject: [SandboxMailbox],
          useFactory: (mailbox: SandboxMailbox) => ({
            logger: false as const,
            ...options.email,
            apiKey: mailbox.apiKey,
            baseUrl: mailbox.baseUrl,
          }),
        }),
      ],
      exports: [holder, EmailModule],
    };
  }
}
